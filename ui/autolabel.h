// SPDX-License-Identifier: GPL-3.0-or-later
// Auto-labelling in words: the question asked before a rule plan (labeling/rulelabeler.h) is
// applied (how many pairs, which simulated labelers, kept apart, undone as one) and the summary
// after it. The plan and its labels are core's; only the words and the dialog are here.
#pragma once

#include <QString>

#include "labeling/rulelabeler.h"

class QWidget;

namespace d2dpo::ui {

/// Asks the user with a dialog.
bool confirmAutoLabel(QWidget* parent, const RuleLabelPlan& plan);
/// "Auto-labelled 25 pairs as rule:odd (Ctrl+Z undoes them all)".
QString autoLabelSummary(const RuleLabelPlan& plan, const RuleLabelOutcome& outcome);

} // namespace d2dpo::ui
