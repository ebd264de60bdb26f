// SPDX-License-Identifier: GPL-3.0-or-later
// The simulated expert: each pending pair labelled by its own task's rule ("rule:odd"), as the
// Label view's auto-label and `d2dpo label` both do it. Planned first (the user is told how many
// pairs and which simulated labelers before anything is stored), then applied; a label session
// undoes an applied plan as one step.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/choice.h"
#include "base/result.h"
#include "labeling/taskcatalog.h"
#include "store/preferencestore.h"

namespace d2dpo {

struct RuleLabelPlan {
    struct Label {
        int64_t pairId = 0;
        Choice choice = Choice::Skip;
        std::string labeler; ///< "rule:<spec>", or the name the caller gave
        std::string rule;    ///< the rule's spec
    };
    std::vector<Label> labels;
    std::set<std::string> labelers;
    int64_t withoutRule = 0;       ///< pending pairs whose task has no rule (left for people)
    std::string firstTaskWithoutRule;
    int64_t unreadable = 0;        ///< pending pairs whose task the store cannot make
    std::string firstUnreadable;   ///< "pair 12: the store does not know the task ..."
};

struct RuleLabelOutcome {
    std::vector<int64_t> labelIds;                   ///< what was stored, in order
    std::array<int64_t, kChoiceCount> byChoice = {}; ///< stored labels per choice
    std::map<std::string, int64_t> byRule;           ///< stored labels per rule spec
    int64_t alreadyLabelled = 0; ///< pairs labelled by someone else since the plan: left out
    std::string error;           ///< set when storing stopped early; the labels before it stay committed
};

/// A simulated expert who errs: each left or right label of the plan is flipped with probability
/// `flipRate` (seeded); ties stay ties.
void addLabelNoise(RuleLabelPlan& plan, double flipRate, uint64_t seed);

class RuleLabeler {
public:
    explicit RuleLabeler(TaskCatalog& tasks) : m_tasks(tasks) {}

    /// What the rules would label among `pending`; nothing is stored. `labeler` replaces the
    /// simulated expert's name ("rule:<spec>") when given.
    RuleLabelPlan plan(const std::vector<ShownPair>& pending, const std::string& labeler = "");
    /// Stores the plan's labels one by one (each committed); a pair labelled meanwhile is left out
    /// and counted, any other failure stops with the labels before it kept.
    RuleLabelOutcome apply(PreferenceStore& store, const RuleLabelPlan& plan);

private:
    TaskCatalog& m_tasks;
};

} // namespace d2dpo
