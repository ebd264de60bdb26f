// SPDX-License-Identifier: GPL-3.0-or-later
// TrainView: the runs in the store. Past runs' curves on the plots, and on a team store the runs
// of other machines as they happen: the list follows their starts and ends, the plots their steps.
#include "ui/train/trainview.h"

#include <QLabel>
#include <QtConcurrent/QtConcurrentRun>

#include "facades/taskinfo.h"
#include "jobs/dpojob.h"
#include "jobs/dporesume.h"
#include "jobs/runowner.h"
#include "ui/common/longjobs.h"
#include "ui/common/ownconnection.h"
#include "ui/train/liverunfollower.h"
#include "ui/train/runhistory.h"
#include "ui/train/traindatapanel.h"
#include "ui/train/trainplots.h"

namespace d2dpo::ui {

void TrainView::followRuns()
{
    m_follower = new LiveRunFollower(m_store, this);
    // A look found runs started or ended elsewhere: listed again off the window's thread.
    connect(m_follower, &LiveRunFollower::runsChanged, this,
            [this] { m_runs->reloadInBackground(training() ? m_ownLockPath : std::string()); });
    connect(m_follower, &LiveRunFollower::followedAdvanced, this, [this](qint64 runId) { showRun(runId, true); });
    connect(m_follower, &LiveRunFollower::followedEnded, this, [this](qint64 runId) {
        m_runs->reloadInBackground(training() ? m_ownLockPath : std::string());
        showRun(runId); // its last curves and how it ended, said once in the log
    });
}

bool TrainView::resume(qint64 runId)
{
    if (training() || m_resuming)
        return false;
    if (!m_store.isTeamStore()) { // a file: read here and now
        return resumeWith(runId, resumeJobSpec(m_store.path(), runId), readStoredRun(m_store, runId));
    }
    // A team store: the job's settings and the curves are read on connections of the task's own.
    struct Read {
        std::optional<DpoJobSpec> job;
        std::string error;
        StoredRun stored;
    };
    m_resuming = true;
    updateStartEnabled();
    m_rate->setText(tr("Reading run #%1 from the team store to resume it…").arg(runId));
    auto* reading = new QFutureWatcher<Read>(this);
    connect(reading, &QFutureWatcherBase::finished, this, [this, reading, runId] {
        reading->deleteLater();
        m_resuming = false;
        const Read read = reading->result();
        if (training()) { // a run started meanwhile
            appendLog(tr("run #%1 was not resumed: another run started").arg(runId));
            return;
        }
        updateStartEnabled();
        resumeWith(runId, read.job ? Result<DpoJobSpec>(*read.job) : makeError(read.error), read.stored);
    });
    reading->setFuture(QtConcurrent::run(storeReadPool(), [path = m_store.path(), runId]() -> Read {
        Read read;
        auto job = resumeJobSpec(path, runId);
        if (!job) {
            read.error = job.error();
            return read;
        }
        read.job = job.value();
        OwnConnection connection(path);
        if (auto store = connection.get())
            read.stored = readStoredRun(*store.value(), runId);
        else
            read.stored.error = store.error();
        read.stored.runId = runId;
        return read;
    }));
    return true;
}

void TrainView::reloadRuns() { m_runs->reload(training() ? m_ownLockPath : std::string()); }

void TrainView::showRun(qint64 runId, bool quiet)
{
    m_wantedRun = runId;
    m_wantedQuiet = quiet;
    ++m_runRequests;
    const auto reference = m_data->selectedModel();
    m_wantedUnder = reference ? reference->id : std::string();
    if (!m_storedRun) {
        m_runReader = std::make_shared<OwnConnection>(m_store.path());
        m_storedRun = new QFutureWatcher<StoredRun>(this);
        connect(m_storedRun, &QFutureWatcherBase::finished, this, [this] {
            const StoredRun stored = m_storedRun->result();
            if (m_wantedRun == 0)
                return; // no longer wanted: a run started, or another reference was chosen
            if (m_readRequest != m_runRequests) {
                // Asked again while this one was read (another run, or the same one since grown or
                // ended): read what was asked last.
                showRun(m_wantedRun, m_wantedQuiet);
                return;
            }
            m_wantedRun = 0;
            if (!training()) // a run started meanwhile has the plots now
                applyStoredRun(stored, m_wantedQuiet);
        });
    }
    if (m_storedRun->isRunning())
        return; // read when the one on its way ends
    m_readRequest = m_runRequests;
    m_storedRun->setFuture(QtConcurrent::run(storeReadPool(), [connection = m_runReader, runId]() -> StoredRun {
        auto opened = connection->get();
        if (!opened) {
            StoredRun failed;
            failed.runId = runId;
            failed.error = opened.error();
            return failed;
        }
        return readStoredRun(*opened.value(), runId);
    }));
}

void TrainView::applyStoredRun(const StoredRun& stored, bool quiet)
{
    const qint64 runId = stored.runId;
    if (!stored.run) {
        appendLog(stored.error.empty() ? tr("run %1 is not in the store").arg(runId)
                                       : tr("cannot read run %1: %2").arg(runId).arg(QString::fromStdString(stored.error)));
        return;
    }
    const RunRecord& run = *stored.run;
    m_plots->showStoredRun(stored);
    m_runs->setShownRun(runId);
    m_shownReference = run.referenceModelId;
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
    if (m_wantedRun && (model ? model->id : std::string()) == m_wantedUnder)
        return; // a run asked for under this very reference is on its way (the list was read again)
    if (training() || (m_runs->shownRun() && model && m_shownReference == model->id))
        return;
    m_wantedRun = 0; // a past run on its way is of the reference left
    m_plots->clear();
    if (auto task = model ? TaskInfo::ofModel(m_store, *model) : Result<TaskInfo>(makeError("no model")))
        m_plots->setSampleMetrics(task->declaredMetrics());
    m_runs->setShownRun(0);
    m_shownReference.clear();
    m_rate->setText(tr("No run of this reference on the plots: start one, or choose a past run"));
}

} // namespace d2dpo::ui
