// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/autolabel.h"

#include <QCoreApplication>
#include <QMessageBox>
#include <QStringList>

#include "ui/taskcache.h"

namespace d2dpo::ui {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("AutoLabel", text); }

QString labelerNames(const AutoLabelPlan& plan)
{
    QStringList names;
    for (const std::string& l : plan.labelers)
        names << QString::fromStdString(l);
    return names.join(QStringLiteral(", "));
}

} // namespace

Result<AutoLabelPlan> planAutoLabel(PreferenceStore& store, TaskCache& tasks)
{
    auto pending = store.pendingPairs(10'000'000);
    if (!pending)
        return makeError(pending.error());
    AutoLabelPlan plan;
    for (const ShownPair& p : pending.value()) {
        const TaskInfo* task = tasks.find(p.task);
        const std::optional<Choice> choice = tasks.ruleChoice(p);
        if (!task || !choice) {
            ++plan.withoutRule;
            continue;
        }
        plan.labels.push_back({p.id, *choice, task->simulatedExpertName()});
        plan.labelers.insert(task->simulatedExpertName());
    }
    return plan;
}

bool confirmAutoLabel(QWidget* parent, const AutoLabelPlan& plan)
{
    const int count = int(plan.labels.size());
    return QMessageBox::question(parent, tr("Auto-label with the rule"),
                                 tr("Label %1 pending pairs with their task's rule, as the simulated expert %2?\n\n"
                                    "These labels are kept apart from yours: the Train view leaves simulated "
                                    "labelers out unless you tick them. Undo (Ctrl+Z) takes all %1 back at once.")
                                     .arg(count)
                                     .arg(labelerNames(plan))) == QMessageBox::Yes;
}

std::vector<int64_t> applyAutoLabel(PreferenceStore& store, const AutoLabelPlan& plan)
{
    std::vector<int64_t> stored;
    for (const AutoLabelPlan::Label& l : plan.labels)
        if (auto id = store.addLabel(l.pairId, l.choice, l.labeler, 0); id)
            stored.push_back(id.value());
    return stored;
}

QString autoLabelSummary(const AutoLabelPlan& plan, int stored)
{
    if (plan.withoutRule == 0)
        return tr("Auto-labelled %1 pairs as %2 (Ctrl+Z undoes them all)").arg(stored).arg(labelerNames(plan));
    return tr("Auto-labelled %1 pairs as %2 (Ctrl+Z undoes them all); %3 pairs of tasks without a rule were left "
              "for you")
        .arg(stored)
        .arg(labelerNames(plan))
        .arg(plan.withoutRule);
}

} // namespace d2dpo::ui
