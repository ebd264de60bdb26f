// SPDX-License-Identifier: GPL-3.0-or-later
// Auto-labelling the pending pairs with their tasks' rules (a simulated expert): planned first, so
// the user is told how many pairs and which simulated labelers before anything is stored; applied
// as one batch, whose label ids the Label view undoes together.
#pragma once

#include <QString>

#include <set>
#include <string>
#include <vector>

#include "base/choice.h"
#include "base/result.h"
#include "store/preferencestore.h"

class QWidget;

namespace d2dpo::ui {

class TaskCache;

struct AutoLabelPlan {
    struct Label {
        int64_t pairId = 0;
        Choice choice = Choice::Skip;
        std::string labeler; ///< "rule:<spec>"
    };
    std::vector<Label> labels;
    std::set<std::string> labelers;
    int withoutRule = 0; ///< pending pairs of tasks without a rule, left for people
};

/// What the rules would label among the pending pairs; nothing is stored.
Result<AutoLabelPlan> planAutoLabel(PreferenceStore& store, TaskCache& tasks);
/// Asks the user with a dialog (count, labelers, kept apart, undone as one).
bool confirmAutoLabel(QWidget* parent, const AutoLabelPlan& plan);
/// Stores the plan's labels; returns the ids stored (a pair labelled meanwhile is left out).
std::vector<int64_t> applyAutoLabel(PreferenceStore& store, const AutoLabelPlan& plan);
/// "Auto-labelled 25 pairs as rule:odd (Ctrl+Z undoes them all)".
QString autoLabelSummary(const AutoLabelPlan& plan, int stored);

} // namespace d2dpo::ui
