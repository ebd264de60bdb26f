// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/labelstats.h"

namespace d2dpo {

LabelStats computeLabelStats(const std::vector<std::pair<ShownPair, LabelRecord>>& labelled, const RuleFunction& rule)
{
    LabelStats stats;
    int64_t agree = 0;
    int64_t left = 0;
    for (const auto& [pair, label] : labelled) {
        ++stats.labels;
        if (label.choice == Choice::Skip || label.choice == Choice::BothBad)
            continue; // no ranking to agree with the rule on
        if (const std::optional<Choice> ruled = rule(pair)) {
            ++stats.compared;
            agree += *ruled == label.choice;
        }
        if (label.choice == Choice::Left || label.choice == Choice::Right) {
            ++stats.decisive;
            left += label.choice == Choice::Left;
        }
    }
    if (stats.compared > 0)
        stats.ruleAgreement = double(agree) / double(stats.compared);
    if (stats.decisive > 0)
        stats.leftPickRate = double(left) / double(stats.decisive);
    return stats;
}

} // namespace d2dpo
