// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/label/autolabel.h"

#include <QCoreApplication>
#include <QMessageBox>
#include <QStringList>

namespace d2dpo::ui {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("AutoLabel", text); }

QString labelerNames(const RuleLabelPlan& plan)
{
    QStringList names;
    for (const std::string& l : plan.labelers)
        names << QString::fromStdString(l);
    return names.join(QStringLiteral(", "));
}

} // namespace

bool confirmAutoLabel(QWidget* parent, const RuleLabelPlan& plan)
{
    const int count = int(plan.labels.size());
    return QMessageBox::question(parent, tr("Auto-label with the rule"),
                                 tr("Label %1 pending pairs with their task's rule, as the simulated expert %2?\n\n"
                                    "These labels are kept apart from yours: the Train view leaves simulated "
                                    "labelers out unless you tick them. Undo (Ctrl+Z) takes all %1 back at once.")
                                     .arg(count)
                                     .arg(labelerNames(plan))) == QMessageBox::Yes;
}

QString noRuleToLabelText() { return tr("No pending pair has a task with a rule to label it"); }

QString autoLabelSummary(const RuleLabelPlan& plan, const RuleLabelOutcome& outcome)
{
    const int stored = int(outcome.labelIds.size());
    const int64_t leftForPeople = plan.withoutRule + plan.unreadable;
    QString text = leftForPeople == 0
                       ? tr("Auto-labelled %1 pairs as %2 (Ctrl+Z undoes them all)").arg(stored).arg(labelerNames(plan))
                       : tr("Auto-labelled %1 pairs as %2 (Ctrl+Z undoes them all); %3 pairs of tasks without a rule "
                            "were left for you")
                             .arg(stored)
                             .arg(labelerNames(plan))
                             .arg(leftForPeople);
    if (!outcome.error.empty())
        text += tr("; stopped early: %1").arg(QString::fromStdString(outcome.error));
    return text;
}

AutoLabelResult autoLabelPending(QWidget* parent, PreferenceStore& store, TaskCatalog& tasks, LabelSession& session,
                                 const std::function<bool(int)>& confirm)
{
    auto pending = store.pendingPairs(10'000'000);
    if (!pending)
        return {QString::fromStdString(pending.error()), true, false};
    RuleLabeler labeler(tasks);
    const RuleLabelPlan plan = labeler.plan(pending.value());
    if (plan.labels.empty())
        return {noRuleToLabelText(), false, false};
    const int count = int(plan.labels.size());
    if (!(confirm ? confirm(count) : confirmAutoLabel(parent, plan)))
        return {};
    const RuleLabelOutcome outcome = session.applyRulePlan(labeler, plan);
    return {autoLabelSummary(plan, outcome), false, true};
}

} // namespace d2dpo::ui
