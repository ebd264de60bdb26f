// SPDX-License-Identifier: GPL-3.0-or-later
// How an expert labels, for the Label view: agreement with a rule (for simulations and for
// spotting a confused expert) and the share of left picks (position bias).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/preferencestore.h"

namespace d2dpo {

struct LabelStats {
    int64_t labels = 0;          ///< active labels counted
    int64_t compared = 0;        ///< labels other than skip: those the rule is compared with
    double ruleAgreement = 0;    ///< share of compared labels equal to the rule's choice
    int64_t decisive = 0;        ///< left or right picks
    double leftPickRate = 0;     ///< left picks / decisive picks (0.5 = no position bias)
};

/// The rule's choice for a pair as shown, or nothing when the pair's task has no rule.
using RuleFunction = std::function<std::optional<Choice>(const ShownPair& pair)>;

LabelStats computeLabelStats(const std::vector<std::pair<ShownPair, LabelRecord>>& labelled, const RuleFunction& rule);

} // namespace d2dpo
