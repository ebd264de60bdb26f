// SPDX-License-Identifier: GPL-3.0-or-later
// A named rule that ranks sequences: the simulated expert's labels, the agreement statistics,
// rule-made preference pairs and the "share the rule prefers" metric all come from one. A rule
// scores a valid sequence's text in [0, 1]; the task puts every invalid sequence below every
// valid one (rank 0 against 1 + score), so comparing ranks is antisymmetric, and equal ranks tie.
// No torch.
#pragma once

#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/result.h"

namespace d2dpo {

class Rule {
public:
    virtual ~Rule() = default;
    /// As the user writes it ("odd", "motif:^[aeiou]", "composition:GC", "in-data").
    virtual std::string spec() const = 0;
    /// What it prefers, for people ("a match of ^[aeiou] beats no match").
    virtual std::string describe() const = 0;
    /// A valid sequence's text -> its score in [0, 1]; higher is preferred.
    virtual double score(const std::string& text) const = 0;
    /// What the score means for one sequence, for the Label view's hints ("odd", "no match").
    virtual std::string explain(const std::string& text) const = 0;
    /// Whether the rule's metric is a share of samples (0/1 scores) rather than a mean score.
    virtual bool binary() const { return true; }
    /// The spans of `text` the rule looks at, [begin, end) in characters, left to right and
    /// disjoint, so a view can mark them (a motif's matches); empty for rules about the whole text.
    virtual std::vector<std::pair<int, int>> matches(const std::string& /*text*/) const { return {}; }
};

/// The rules of sequence-file tasks: "motif:REGEX" (a match anywhere beats no match; ECMAScript
/// syntax), "composition:SYMBOLS" (a higher share of those symbols wins) and "in-data" (one of
/// the training sequences beats a novel one). `symbols` are the task's; `data` its sequences.
Result<std::unique_ptr<Rule>> makeSequenceRule(const std::string& spec, const std::string& symbols,
                                               const std::unordered_set<std::string>& data);

} // namespace d2dpo
