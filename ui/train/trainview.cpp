// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/train/trainview.h"

#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QScrollBar>
#include <QSplitter>
#include <QTime>
#include <QVBoxLayout>

#include "base/timeutil.h"
#include "jobs/dpojob.h"
#include "jobs/dporesume.h"
#include "jobs/desktoprun.h"
#include "ui/train/runadvice.h"
#include "ui/train/runhistory.h"
#include "ui/train/measuredsourcebox.h"
#include "ui/train/traindatapanel.h"
#include "ui/train/trainplots.h"
#include "facades/taskinfo.h"
#include "ui/train/trainsettingsform.h"
#include "ui/common/timeleft.h"
#include "ui/train/trainworker.h"

namespace d2dpo::ui {

static QString duration(double seconds) { return QString::fromStdString(clockDuration(seconds)); }

TrainView::TrainView(PreferenceStore& store, QWidget* parent)
    : QWidget(parent)
    , m_store(store)
    , m_runner(new TrainRunner(this))
{
    // Left: the settings scroll; Start/Stop and the progress stay in view below them at any size.
    auto* splitter = new QSplitter(Qt::Horizontal, this);
    auto* left = new QWidget(splitter);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    auto* scroll = new QScrollArea(left);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(buildControls());
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(scroll->widget()->sizeHint().width() + scroll->verticalScrollBar()->sizeHint().width() + 4);
    leftLayout->addWidget(scroll, 1);
    leftLayout->addWidget(buildRunBar(left));
    splitter->addWidget(left);
    splitter->addWidget(buildPlots());
    splitter->setStretchFactor(1, 1);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addWidget(splitter);

    connect(m_runner, &TrainRunner::progress, this, &TrainView::onProgress);
    connect(m_runner, &TrainRunner::evaluated, this, &TrainView::onEvaluation);
    connect(m_runner, &TrainRunner::logLine, this, [this](const QString& line) {
        appendLog(line);
        // A phase between steps (the reference's measurement, an evaluation of a large model) is
        // said where the steps' rate is, not only in the log, until the next step's progress.
        for (const char* phase : {"timing one pass", "measuring ", "evaluating step "})
            if (line.startsWith(QLatin1String(phase))) {
                m_phase = line.left(1).toUpper() + line.mid(1);
                m_phaseClock.start();
                m_rate->setText(m_phase + QStringLiteral("…"));
            }
    });
    // ... with its samples drawn and the time left, as its passes go.
    connect(m_runner, &TrainRunner::evaluationProgress, this, [this](double drawn, qint64 total) {
        m_rate->setText(tr("%1: %2 / %3 samples · %4 left")
                            .arg(m_phase)
                            .arg(qint64(drawn))
                            .arg(total)
                            .arg(clockLeft(m_phaseClock, drawn, total)));
    });
    connect(m_runner, &TrainRunner::checkpointWritten, this, [this](const CheckpointEvent& e) {
        appendLog(tr("checkpoint at step %1: %2").arg(e.step).arg(QString::fromStdString(e.path)));
    });
    connect(m_runner, &TrainRunner::finished, this, &TrainView::onFinished);

    m_form->loadSettings();
    reload();
    setRunning(false);
    followRuns();
}

TrainView::~TrainView() { shutdown(); }

void TrainView::reload()
{
    // The first lists when the view is made (as the window opens), and every list of a file (a
    // local read); a team store's later ones (the tab shown, a model added) off the window's
    // thread, shown when they arrive.
    if (!m_listed || !m_store.isTeamStore()) {
        m_listed = true;
        m_data->reload();
        reloadRuns();
        return;
    }
    m_data->reloadInBackground();
    m_runs->reloadInBackground(training() ? m_ownLockPath : std::string());
}

bool TrainView::selectReference(const QString& modelId) { return m_data->selectReference(modelId); }

void TrainView::useRulePairs(bool rulePairs, int count) { m_data->useRulePairs(rulePairs, count); }

bool TrainView::training() const { return m_runner->running(); }

qint64 TrainView::pairCount() const { return m_data->pairCount(); }

MetricPlot* TrainView::lossPlot() const { return m_plots->lossPlot(); }
MetricPlot* TrainView::samplePlot() const { return m_plots->samplePlot(); }
MetricPlot* TrainView::accuracyPlot() const { return m_plots->accuracyPlot(); }
MetricPlot* TrainView::rewardPlot() const { return m_plots->rewardPlot(); }

QString TrainView::logText() const { return m_log->toPlainText(); }

void TrainView::updateStartEnabled()
{
    const bool running = training();
    m_start->setEnabled(!running && !m_resuming && m_data->pairCount() > 0 && m_form->settings().has_value());
    m_stop->setEnabled(running);
    if (const auto spec = m_data->selectedSpec(); !running && m_advice) {
        const auto settings = m_form->settings();
        m_advice->beforeRun(m_data->pairCount(), spec ? spec->task.length : 0, m_data->rulePairs(),
                            settings ? settings->dpo.batch : 0);
    }
}

void TrainView::setRunning(bool running)
{
    m_form->setEnabled(!running);
    m_data->setEditable(!running);
    m_runs->setSelectable(!running);
    updateStartEnabled();
}

bool TrainView::start()
{
    if (training() || m_resuming) // a run being resumed starts when its record lands
        return false;
    const auto model = m_data->selectedModel();
    const auto settings = m_form->settings();
    const qint64 pairs = m_data->pairCount();
    if (!model || !settings || pairs <= 0) {
        appendLog(tr("cannot start: %1")
                      .arg(!model ? tr("choose a reference model")
                           : !settings ? m_form->problems().join(QLatin1Char(' '))
                                       : m_data->summary()));
        return false;
    }
    DpoJobSpec job;
    job.referencePath = model->path;
    job.storePath = m_store.path();
    job.source = m_data->source();
    if (job.source == PreferenceSource::Measurements || job.source == PreferenceSource::LabelsAndMeasurements) {
        const MeasuredSourceBox& measured = *m_data->measuredSource();
        job.measured = measured.spec();
        job.labelsWeight = measured.labelsShare();
        job.measurementsWeight = 1.0 - measured.labelsShare();
        job.grouped = measured.grouped();
    }
    job.rulePairs = m_data->rulePairCount();
    job.labelers = m_data->chosenLabelers();
    job.dpo = settings->dpo;
    job.schedule = settings->schedule;
    job.sampling = settings->sampling;
    job.eta = settings->eta;
    job.device = settings->device.toStdString();
    job.seed = settings->seed;
    job.evalSeconds = settings->evalSeconds;
    checkpointAtEveryEvaluation(job.schedule);
    leaveACoreForTheGui(job);
    job.outputFolder = newRunFolder(m_store.path(), model->id);
    m_form->saveSettings();
    QSettings().setValue(QStringLiteral("train/reference"), QString::fromStdString(model->id));

    m_plots->clear();
    m_runs->setShownRun(0);
    m_wantedRun = 0; // a past run on its way would clear the new run's curves
    m_shownReference = model->id; // the plots show this reference's run from now on
    m_banner->setVisible(false);
    m_progress->setRange(0, settings->dpo.steps);
    m_progress->setValue(0);
    m_plots->setStepRange(settings->dpo.steps);
    m_rate->setText(tr("Starting…"));
    m_log->appendPlainText(QStringLiteral("\n── %1 ──").arg(tr("new run")));
    appendLog(tr("starting D2-DPO from %1 on %L2 pairs; checkpoints in %3")
                  .arg(QString::fromStdString(model->name))
                  .arg(pairs)
                  .arg(QString::fromStdString(job.outputFolder)));
    startJob(job);
    Q_EMIT statusMessage(tr("Training…"));
    return true;
}

void TrainView::startJob(const DpoJobSpec& job)
{
    m_ownLockPath = runLockPath(job.outputFolder);
    auto outcome = std::make_shared<DpoJobOutcome>();
    m_outcome = outcome;
    m_advice->runStarted();
    m_runner->start([job, outcome](TrainListener& listener, const StopToken& stop) {
        *outcome = runDpoJob(job, listener, stop);
        return outcome->finished;
    });
    setRunning(true);
}

bool TrainView::resumeWith(qint64 runId, const Result<DpoJobSpec>& read, const StoredRun& stored)
{
    if (!read) {
        appendLog(tr("cannot resume run #%1: %2").arg(runId).arg(QString::fromStdString(read.error())));
        m_rate->setText(tr("Run #%1 was not resumed (the log says why)").arg(runId));
        return false;
    }
    DpoJobSpec job = read.value();
    leaveACoreForTheGui(job);
    m_wantedRun = 0; // a read of a past run still on its way must not wipe these curves
    applyStoredRun(stored, false);
    m_banner->setVisible(false);
    m_progress->setRange(0, job.dpo.steps);
    m_plots->setStepRange(job.dpo.steps);
    m_rate->setText(tr("Resuming…"));
    m_log->appendPlainText(QStringLiteral("\n── %1 ──").arg(tr("run #%1 resumed").arg(runId)));
    appendLog(tr("resuming run #%1; checkpoints in %2").arg(runId).arg(QString::fromStdString(job.outputFolder)));
    startJob(job);
    Q_EMIT statusMessage(tr("Training (resumed)…"));
    return true;
}

void TrainView::stop()
{
    if (!training())
        return;
    m_runner->requestStop();
    m_stop->setEnabled(false);
    appendLog(tr("stopping after the current step…"));
}

void TrainView::shutdown()
{
    if (!training())
        return;
    m_runner->requestStop();
    m_runner->wait(600'000);
}

void TrainView::onProgress(const ProgressEvent& e)
{
    m_plots->addProgress(e);
    if (m_progress->maximum() != int(e.totalSteps)) {
        m_progress->setRange(0, int(e.totalSteps));
        m_plots->setStepRange(e.totalSteps);
    }
    m_progress->setValue(int(e.step));
    const double remaining = e.stepsPerSecond > 0 ? double(e.totalSteps - e.step) / e.stepsPerSecond : NAN;
    m_rate->setText(tr("%1 steps/s · elapsed %2 · ETA %3 · loss %4")
                        .arg(e.stepsPerSecond, 0, 'f', 1)
                        .arg(duration(e.elapsedSeconds), duration(remaining))
                        .arg(e.loss, 0, 'f', 4));
}

void TrainView::onEvaluation(const EvaluationEvent& e)
{
    m_plots->addEvaluation(e);
    m_advice->onEvaluation(e);
    QStringList values;
    for (const MetricValue& v : e.metrics.values)
        values << QStringLiteral("%1 %2").arg(QString::fromStdString(v.name)).arg(v.value, 0, 'f', 4);
    const QString who = e.ofReference ? tr("reference") : tr("step %1").arg(e.step);
    appendLog(tr("%1: %2 (%3)").arg(who, values.join(QStringLiteral(", ")), QString::fromStdString(e.metrics.provenance())));
}

void TrainView::onFinished(const FinishedEvent& e)
{
    setRunning(false);
    m_advice->runEnded(); // after setRunning: the data's advice gives way to what the run did
    const QString status = QString::fromLatin1(toString(e.status));
    QString line = tr("run %1 after %2 steps in %3").arg(status).arg(e.stepsDone).arg(duration(e.elapsedSeconds));
    if (!e.lastCheckpointPath.empty())
        line += tr("; fine-tuned checkpoint %1").arg(QString::fromStdString(e.lastCheckpointPath));
    appendLog(line);
    if (e.status == RunStatus::Failed) {
        QString message = tr("The run failed: %1").arg(QString::fromStdString(e.error));
        message += e.lastCheckpointPath.empty()
                       ? tr(" No checkpoint was kept.")
                       : tr(" The last good checkpoint is kept: %1").arg(QString::fromStdString(e.lastCheckpointPath));
        appendLog(tr("error: %1").arg(QString::fromStdString(e.error)));
        m_banner->setText(message);
        m_banner->setToolTip(message); // whole, should the strip cut it
        m_banner->setStyleSheet(QStringLiteral("QLabel { background: #fde2e1; color: #8c1d18; padding: 6px; }"));
        m_banner->setVisible(true);
    }
    m_rate->setText(tr("%1 · %2 steps in %3").arg(status).arg(e.stepsDone).arg(duration(e.elapsedSeconds)));
    if (m_outcome && m_outcome->runId > 0)
        m_runs->setShownRun(m_outcome->runId); // the run just ended is the one the plots show
    if (m_store.isTeamStore())
        m_runs->reloadInBackground(std::string()); // a team store's list, off the window's thread
    else
        reloadRuns();
    Q_EMIT statusMessage(tr("Training %1").arg(status));
    Q_EMIT runFinished(e.status);
}

void TrainView::appendLog(const QString& line)
{
    m_log->appendPlainText(QStringLiteral("%1  %2").arg(QTime::currentTime().toString(QStringLiteral("HH:mm:ss")), line));
    // The newest line is always in view: a new run's log is never left below the fold.
    m_log->verticalScrollBar()->setValue(m_log->verticalScrollBar()->maximum());
}

} // namespace d2dpo::ui
