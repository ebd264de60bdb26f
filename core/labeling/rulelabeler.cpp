// SPDX-License-Identifier: GPL-3.0-or-later
#include "labeling/rulelabeler.h"

#include <algorithm>
#include <random>

namespace d2dpo {

RuleLabelPlan RuleLabeler::plan(const std::vector<ShownPair>& pending, const std::string& labeler)
{
    RuleLabelPlan plan;
    for (const ShownPair& p : pending) {
        const TaskInfo* task = m_tasks.find(p.task);
        if (!task) {
            if (plan.unreadable++ == 0)
                plan.firstUnreadable = "pair " + std::to_string(p.id) + ": " + m_tasks.lastError();
            continue;
        }
        if (!task->hasRule()) {
            if (plan.withoutRule++ == 0)
                plan.firstTaskWithoutRule = p.task;
            continue;
        }
        auto choice = task->ruleChoice(p.left, p.right);
        if (!choice) {
            if (plan.unreadable++ == 0)
                plan.firstUnreadable = "pair " + std::to_string(p.id) + ": " + choice.error();
            continue;
        }
        const std::string name = labeler.empty() ? task->simulatedExpertName() : labeler;
        plan.labels.push_back({p.id, choice.value(), name, task->ruleSpec()});
        plan.labelers.insert(name);
    }
    return plan;
}

void addLabelNoise(RuleLabelPlan& plan, double flipRate, uint64_t seed)
{
    std::mt19937_64 random(seed);
    std::bernoulli_distribution flip(std::clamp(flipRate, 0.0, 1.0));
    for (RuleLabelPlan::Label& l : plan.labels)
        if ((l.choice == Choice::Left || l.choice == Choice::Right) && flip(random))
            l.choice = l.choice == Choice::Left ? Choice::Right : Choice::Left;
}

RuleLabelOutcome RuleLabeler::apply(PreferenceStore& store, const RuleLabelPlan& plan)
{
    RuleLabelOutcome outcome;
    for (const RuleLabelPlan::Label& l : plan.labels) {
        auto id = store.addLabel(l.pairId, l.choice, l.labeler, 0);
        if (!id) {
            if (id.errorCode() == ErrorCode::AlreadyLabelled) {
                ++outcome.alreadyLabelled;
                continue;
            }
            outcome.error = id.error();
            break;
        }
        outcome.labelIds.push_back(id.value());
        ++outcome.byChoice[size_t(l.choice)];
        ++outcome.byRule[l.rule];
    }
    return outcome;
}

} // namespace d2dpo
