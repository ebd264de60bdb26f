// SPDX-License-Identifier: GPL-3.0-or-later
// Auto-labelling in words: the question asked before a rule plan (labeling/rulelabeler.h) is
// applied (how many pairs, which simulated labelers, kept apart, undone as one) and the summary
// after it. The plan and its labels are core's; only the words and the dialog are here.
#pragma once

#include <QString>

#include <functional>

#include "labeling/labelsession.h"
#include "labeling/rulelabeler.h"

class QWidget;

namespace d2dpo::ui {

/// Asks the user with a dialog.
bool confirmAutoLabel(QWidget* parent, const RuleLabelPlan& plan);
/// What is said when no pending pair's task has a rule.
QString noRuleToLabelText();
/// "Auto-labelled 25 pairs as rule:odd (Ctrl+Z undoes them all)".
QString autoLabelSummary(const RuleLabelPlan& plan, const RuleLabelOutcome& outcome);

/// What auto-labelling the pending pairs did.
struct AutoLabelResult {
    QString message;      ///< the status line
    bool failed = false;  ///< message is an error
    bool applied = false; ///< labels were stored (one undo step of the session)
};
/// Labels every pending pair whose task has a rule as its simulated expert, as one undo step of
/// `session`, once `confirm(count)` (else a dialog over `parent`) agrees.
AutoLabelResult autoLabelPending(QWidget* parent, PreferenceStore& store, TaskCatalog& tasks, LabelSession& session,
                                 const std::function<bool(int)>& confirm);

} // namespace d2dpo::ui
