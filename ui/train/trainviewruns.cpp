// SPDX-License-Identifier: GPL-3.0-or-later
// TrainView: the runs in the store. Past runs' curves on the plots, and on a team store the runs
// of other machines as they happen: the list follows their starts and ends, the plots their steps.
#include "ui/train/trainview.h"

#include <QLabel>

#include "facades/taskinfo.h"
#include "jobs/runowner.h"
#include "ui/train/liverunfollower.h"
#include "ui/train/runhistory.h"
#include "ui/train/traindatapanel.h"
#include "ui/train/trainplots.h"

namespace d2dpo::ui {

void TrainView::followRuns()
{
    m_follower = new LiveRunFollower(m_store, this);
    connect(m_follower, &LiveRunFollower::runsChanged, this, &TrainView::reloadRuns);
    connect(m_follower, &LiveRunFollower::followedAdvanced, this, [this](qint64 runId) { showRun(runId, true); });
    connect(m_follower, &LiveRunFollower::followedEnded, this, [this](qint64 runId) {
        reloadRuns();
        showRun(runId); // its last curves and how it ended, said once in the log
    });
}

void TrainView::reloadRuns() { m_runs->reload(training() ? m_ownLockPath : std::string()); }

void TrainView::showRun(qint64 runId, bool quiet)
{
    auto record = m_store.run(runId);
    if (!record || !record->has_value()) {
        appendLog(tr("run %1 is not in the store").arg(runId));
        return;
    }
    // The run's task (from its reference model) says which sample metrics it recorded.
    SampleMetrics declared;
    const RunRecord& shown = *record.value();
    if (auto reference = m_store.model(shown.referenceModelId); reference && reference->has_value())
        if (auto task = TaskInfo::ofModel(m_store, *reference.value()))
            declared = task->declaredMetrics();
    m_plots->showStoredRun(m_store, runId, declared);
    m_runs->setShownRun(runId);
    const RunRecord& run = *record.value();
    m_banner->setVisible(false);
    // A run alive in another process (another machine, on a team store) is followed as it trains.
    const bool elsewhere = runsInAnotherProcess(run, training() ? m_ownLockPath : std::string());
    m_follower->follow(elsewhere ? runId : 0);
    m_rate->setText(elsewhere ? tr("Following run #%1 live, as it trains in another process").arg(runId)
                              : tr("Showing run #%1 (%2)").arg(runId).arg(QString::fromLatin1(toString(run.status))));
    if (quiet)
        return;
    appendLog(tr("showing run #%1: %2, started %3 on %4%5")
                  .arg(runId)
                  .arg(QString::fromLatin1(toString(run.status)), QString::fromStdString(run.startedAt),
                       QString::fromStdString(run.device),
                       run.error.empty() ? QString() : tr("; error: %1").arg(QString::fromStdString(run.error))));
}

void TrainView::forgetRunOfAnotherReference()
{
    // Curves of a run from another reference under this one's name would read as its own.
    const auto model = m_data->selectedModel();
    auto shown = m_runs->shownRun() ? m_store.run(m_runs->shownRun()) : Result<std::optional<RunRecord>>(std::nullopt);
    if (training() || (shown && shown->has_value() && model && shown.value()->referenceModelId == model->id))
        return;
    m_plots->clear();
    if (auto task = model ? TaskInfo::ofModel(m_store, *model) : Result<TaskInfo>(makeError("no model")))
        m_plots->setSampleMetrics(task->declaredMetrics());
    m_runs->setShownRun(0);
    m_rate->setText(tr("No run of this reference on the plots: start one, or choose a past run"));
}

} // namespace d2dpo::ui
