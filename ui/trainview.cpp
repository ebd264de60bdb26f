#include "trainview.h"

#include <QButtonGroup>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRadioButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QTime>
#include <QVBoxLayout>

#include <cmath>

#include "dpojob.h"
#include "metricplot.h"
#include "trainsettingsform.h"
#include "trainworker.h"

namespace d2dpo::ui {

namespace {

// Series indices within each plot.
enum { kLoss = 0, kLossAverage = 1 };
enum { kOddRatio = 0, kVsr = 1 };
enum { kAccuracy = 0, kMargin = 1 };
enum { kChosen = 0, kRejected = 1 };

const QColor kBlue(31, 119, 180);
const QColor kOrange(255, 127, 14);
const QColor kGreen(44, 160, 44);
const QColor kRed(214, 39, 40);
const QColor kGrey(150, 150, 150);

QString duration(double seconds)
{
    if (!std::isfinite(seconds) || seconds < 0)
        return QStringLiteral("–");
    const qint64 s = qint64(std::llround(seconds));
    return s >= 3600 ? QStringLiteral("%1:%2:%3").arg(s / 3600).arg(s / 60 % 60, 2, 10, QLatin1Char('0')).arg(s % 60, 2, 10, QLatin1Char('0'))
                     : QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

std::optional<ModelSpec> specOf(const ModelRecord& model)
{
    auto spec = modelSpecFromJson(model.specJson);
    return spec ? std::optional(spec.value()) : std::nullopt;
}

} // namespace

TrainView::TrainView(PreferenceStore& store, QWidget* parent)
    : QWidget(parent)
    , m_store(store)
    , m_runner(new TrainRunner(this))
{
    auto* splitter = new QSplitter(Qt::Horizontal, this);
    auto* scroll = new QScrollArea(splitter);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(buildControls());
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(scroll->widget()->sizeHint().width() + scroll->verticalScrollBar()->sizeHint().width() + 4);
    splitter->addWidget(scroll);
    splitter->addWidget(buildPlots());
    splitter->setStretchFactor(1, 1);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addWidget(splitter);

    connect(m_runner, &TrainRunner::progress, this, &TrainView::onProgress);
    connect(m_runner, &TrainRunner::evaluated, this, &TrainView::onEvaluation);
    connect(m_runner, &TrainRunner::logLine, this, &TrainView::appendLog);
    connect(m_runner, &TrainRunner::checkpointWritten, this, [this](const CheckpointEvent& e) {
        appendLog(tr("checkpoint at step %1: %2").arg(e.step).arg(QString::fromStdString(e.path)));
    });
    connect(m_runner, &TrainRunner::finished, this, &TrainView::onFinished);

    m_form->loadSettings();
    reload();
    setRunning(false);
}

TrainView::~TrainView() { shutdown(); }

QWidget* TrainView::buildControls()
{
    auto* panel = new QWidget;
    auto* column = new QVBoxLayout(panel);

    auto* data = new QGroupBox(tr("Model and preferences"), panel);
    auto* dataLayout = new QVBoxLayout(data);
    dataLayout->addWidget(new QLabel(tr("Reference model (the policy starts equal to it):"), data));
    m_reference = new QComboBox(data);
    m_reference->setObjectName(QStringLiteral("reference"));
    m_reference->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_reference->setMinimumContentsLength(20);
    dataLayout->addWidget(m_reference);
    m_fromLabels = new QRadioButton(tr("The experts' labels in the store"), data);
    m_fromRule = new QRadioButton(tr("Rule-made pairs (odd preferred over even)"), data);
    auto* group = new QButtonGroup(data);
    group->addButton(m_fromLabels);
    group->addButton(m_fromRule);
    m_fromLabels->setChecked(true);
    dataLayout->addWidget(m_fromLabels);
    auto* ruleRow = new QHBoxLayout;
    ruleRow->addWidget(m_fromRule);
    m_rulePairs = new QSpinBox(data);
    m_rulePairs->setRange(1, 10'000'000);
    m_rulePairs->setValue(20000);
    m_rulePairs->setGroupSeparatorShown(true);
    ruleRow->addWidget(m_rulePairs);
    dataLayout->addLayout(ruleRow);
    m_pairSummary = new QLabel(data);
    m_pairSummary->setObjectName(QStringLiteral("pairSummary"));
    m_pairSummary->setWordWrap(true);
    dataLayout->addWidget(m_pairSummary);
    column->addWidget(data);

    auto* settings = new QGroupBox(tr("D2-DPO settings"), panel);
    auto* settingsLayout = new QVBoxLayout(settings);
    m_form = new TrainSettingsForm(settings);
    settingsLayout->addWidget(m_form);
    column->addWidget(settings);

    auto* buttons = new QHBoxLayout;
    m_start = new QPushButton(tr("Start training"), panel);
    m_start->setObjectName(QStringLiteral("start"));
    m_start->setDefault(true);
    m_stop = new QPushButton(tr("Stop"), panel);
    m_stop->setObjectName(QStringLiteral("stop"));
    buttons->addWidget(m_start);
    buttons->addWidget(m_stop);
    column->addLayout(buttons);
    m_progress = new QProgressBar(panel);
    m_progress->setFormat(QStringLiteral("%v / %m steps"));
    column->addWidget(m_progress);
    m_rate = new QLabel(panel);
    m_rate->setObjectName(QStringLiteral("rate"));
    column->addWidget(m_rate);

    auto* runs = new QGroupBox(tr("Past runs (select to show their curves)"), panel);
    auto* runsLayout = new QVBoxLayout(runs);
    m_runs = new QListWidget(runs);
    m_runs->setObjectName(QStringLiteral("runs"));
    m_runs->setMinimumHeight(90);
    runsLayout->addWidget(m_runs);
    column->addWidget(runs, 1);

    connect(m_reference, &QComboBox::currentIndexChanged, this, [this] {
        const auto model = selectedModel();
        m_form->setModelSpec(model ? specOf(*model) : std::nullopt);
        updatePairCount();
    });
    connect(m_fromLabels, &QRadioButton::toggled, this, &TrainView::updatePairCount);
    connect(m_rulePairs, &QSpinBox::valueChanged, this, &TrainView::updatePairCount);
    connect(m_form, &TrainSettingsForm::validityChanged, this, &TrainView::updateStartEnabled);
    connect(m_start, &QPushButton::clicked, this, &TrainView::start);
    connect(m_stop, &QPushButton::clicked, this, &TrainView::stop);
    connect(m_runs, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row >= 0 && !training())
            showRun(m_runs->item(row)->data(Qt::UserRole).toLongLong());
    });
    return panel;
}

QWidget* TrainView::buildPlots()
{
    auto* area = new QWidget;
    auto* layout = new QVBoxLayout(area);
    layout->setContentsMargins(0, 0, 0, 0);
    m_banner = new QLabel(area);
    m_banner->setObjectName(QStringLiteral("banner"));
    m_banner->setWordWrap(true);
    m_banner->setVisible(false);
    layout->addWidget(m_banner);

    auto* grid = new QGridLayout;
    m_lossPlot = new MetricPlot(tr("D2-DPO loss"), tr("step"), tr("loss (nats)"), area);
    m_lossPlot->addSeries(tr("loss"), QColor(kBlue.red(), kBlue.green(), kBlue.blue(), 90));
    m_lossPlot->addSeries(tr("loss, moving average"), kBlue);
    m_samplePlot = new MetricPlot(tr("Samples: odd ratio and VSR"), tr("step"), tr("share of samples"), area);
    m_samplePlot->addSeries(tr("odd ratio"), kOrange, true);
    m_samplePlot->addSeries(tr("VSR"), kGreen, true);
    m_samplePlot->setFixedYRange(0, 1.04);
    m_accuracyPlot = new MetricPlot(tr("Reward accuracy and margin"), tr("step"), tr("rewards/accuracies"), area);
    m_accuracyPlot->addSeries(tr("accuracies"), kBlue);
    m_accuracyPlot->addSeries(tr("margins"), kRed, false, true);
    m_accuracyPlot->setRightAxisLabel(tr("rewards/margins (nats)"));
    m_accuracyPlot->setFixedYRange(0, 1.04);
    m_rewardPlot = new MetricPlot(tr("Chosen and rejected rewards"), tr("step"), tr("reward (nats)"), area);
    m_rewardPlot->addSeries(tr("chosen"), kGreen);
    m_rewardPlot->addSeries(tr("rejected"), kRed);
    grid->addWidget(m_lossPlot, 0, 0);
    grid->addWidget(m_samplePlot, 0, 1);
    grid->addWidget(m_accuracyPlot, 1, 0);
    grid->addWidget(m_rewardPlot, 1, 1);
    layout->addLayout(grid, 1);

    m_log = new QPlainTextEdit(area);
    m_log->setObjectName(QStringLiteral("log"));
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(5000);
    m_log->setMaximumHeight(130);
    m_log->setPlaceholderText(tr("Events of the run appear here."));
    layout->addWidget(m_log);
    return area;
}

void TrainView::reload()
{
    const QString selected = m_reference->currentData().toString();
    {
        const QSignalBlocker block(m_reference);
        m_reference->clear();
        if (auto models = m_store.models()) {
            for (const ModelRecord& m : models.value())
                m_reference->addItem(QStringLiteral("%1 · %2").arg(QString::fromStdString(m.name),
                                                                   QString::fromStdString(m.id)),
                                     QString::fromStdString(m.id));
        } else {
            appendLog(tr("error: %1").arg(QString::fromStdString(models.error())));
        }
        const int index = m_reference->findData(selected);
        m_reference->setCurrentIndex(index >= 0 ? index : m_reference->count() - 1);
    }
    const auto model = selectedModel();
    m_form->setModelSpec(model ? specOf(*model) : std::nullopt);
    updatePairCount();
    reloadRuns();
}

bool TrainView::selectReference(const QString& modelId)
{
    const int index = m_reference->findData(modelId);
    if (index >= 0)
        m_reference->setCurrentIndex(index);
    return index >= 0;
}

void TrainView::useRulePairs(bool rulePairs, int count)
{
    (rulePairs ? m_fromRule : m_fromLabels)->setChecked(true);
    m_rulePairs->setValue(count);
    updatePairCount();
}

bool TrainView::training() const { return m_runner->running(); }

QString TrainView::logText() const { return m_log->toPlainText(); }

std::optional<ModelRecord> TrainView::selectedModel() const
{
    const QString id = m_reference->currentData().toString();
    if (id.isEmpty())
        return std::nullopt;
    auto model = m_store.model(id.toStdString());
    return model ? model.value() : std::nullopt;
}

void TrainView::updatePairCount()
{
    m_pairCount = 0;
    const auto model = selectedModel();
    m_rulePairs->setEnabled(m_fromRule->isChecked());
    if (!model) {
        m_pairSummary->setText(tr("No model in the store yet: generate pairs in the Label view first."));
    } else if (m_fromRule->isChecked()) {
        m_pairCount = m_rulePairs->value();
        m_pairSummary->setText(tr("%L1 rule-made pairs: b_i with i odd preferred over b_j with j even.").arg(m_pairCount));
    } else if (auto prefs = m_store.preferences(); !prefs) {
        m_pairSummary->setText(tr("Cannot read the labels: %1").arg(QString::fromStdString(prefs.error())));
    } else {
        const auto spec = specOf(*model);
        const size_t length = spec ? size_t(spec->task.length) : 0;
        qint64 otherLength = 0;
        for (const PreferenceRecord& r : prefs.value())
            (r.chosen.size() == length ? m_pairCount : otherLength) += 1;
        QString text = m_pairCount > 0
                           ? tr("%L1 labelled pairs to train on (ties and skips left out).").arg(m_pairCount)
                           : tr("No decisive labels yet for sequences of length %1: label some pairs first, or "
                                "use rule-made pairs.")
                                 .arg(length);
        if (otherLength > 0)
            text += QLatin1Char(' ') + tr("%L1 labels of another sequence length do not fit this model.").arg(otherLength);
        m_pairSummary->setText(text);
        if (otherLength > 0)
            m_pairCount = 0; // the job refuses a mixed store; say so before Start
    }
    updateStartEnabled();
}

void TrainView::updateStartEnabled()
{
    const bool running = training();
    m_start->setEnabled(!running && m_pairCount > 0 && m_form->settings().has_value());
    m_stop->setEnabled(running);
}

void TrainView::setRunning(bool running)
{
    m_form->setEnabled(!running);
    m_reference->setEnabled(!running);
    m_fromLabels->setEnabled(!running);
    m_fromRule->setEnabled(!running);
    m_rulePairs->setEnabled(!running && m_fromRule->isChecked());
    m_runs->setEnabled(!running);
    updateStartEnabled();
}

void TrainView::clearPlots()
{
    for (MetricPlot* plot : {m_lossPlot, m_samplePlot, m_accuracyPlot, m_rewardPlot})
        plot->clear();
    m_haveAverage = false;
}

bool TrainView::start()
{
    if (training())
        return false;
    const auto model = selectedModel();
    const auto settings = m_form->settings();
    if (!model || !settings || m_pairCount <= 0) {
        appendLog(tr("cannot start: %1")
                      .arg(!model ? tr("choose a reference model")
                           : !settings ? m_form->problems().join(QLatin1Char(' '))
                                       : m_pairSummary->text()));
        return false;
    }
    DpoJobSpec job;
    job.referencePath = model->path;
    job.storePath = m_store.path();
    job.source = m_fromRule->isChecked() ? PreferenceSource::RulePairs : PreferenceSource::StoreLabels;
    job.rulePairs = m_rulePairs->value();
    job.dpo = settings->dpo;
    job.sampling = settings->sampling;
    job.eta = settings->eta;
    job.device = settings->device.toStdString();
    job.seed = settings->seed;
    const QString folder = QFileInfo(QString::fromStdString(m_store.path())).absoluteDir().filePath(
        QStringLiteral("runs/%1-%2")
            .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")), QString::fromStdString(model->id)));
    job.outputFolder = folder.toStdString();
    m_form->saveSettings();

    clearPlots();
    m_shownRun = 0;
    m_banner->setVisible(false);
    m_progress->setRange(0, settings->dpo.steps);
    m_progress->setValue(0);
    setStepRange(settings->dpo.steps);
    m_rate->setText(tr("Starting…"));
    appendLog(tr("starting D2-DPO from %1 on %L2 pairs; checkpoints in %3")
                  .arg(QString::fromStdString(model->name))
                  .arg(m_pairCount)
                  .arg(folder));
    m_runner->start([job](TrainListener& listener, const StopToken& stop) { return runDpoJob(job, listener, stop).finished; });
    setRunning(true);
    Q_EMIT statusMessage(tr("Training…"));
    return true;
}

void TrainView::setStepRange(int64_t steps)
{
    for (MetricPlot* plot : {m_lossPlot, m_samplePlot, m_accuracyPlot, m_rewardPlot})
        plot->setFixedXRange(0, double(std::max<int64_t>(1, steps)));
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
    const double x = double(e.step);
    appendLoss(e.step, e.loss);
    if (e.rewards) {
        m_accuracyPlot->append(kAccuracy, x, e.rewards->accuracies);
        m_accuracyPlot->append(kMargin, x, e.rewards->margins);
        m_rewardPlot->append(kChosen, x, e.rewards->chosen);
        m_rewardPlot->append(kRejected, x, e.rewards->rejected);
    }
    if (m_progress->maximum() != int(e.totalSteps)) {
        m_progress->setRange(0, int(e.totalSteps));
        setStepRange(e.totalSteps);
    }
    m_progress->setValue(int(e.step));
    const double remaining = e.stepsPerSecond > 0 ? double(e.totalSteps - e.step) / e.stepsPerSecond : NAN;
    m_rate->setText(tr("%1 steps/s · elapsed %2 · ETA %3 · loss %4")
                        .arg(e.stepsPerSecond, 0, 'f', 1)
                        .arg(duration(e.elapsedSeconds), duration(remaining))
                        .arg(e.loss, 0, 'f', 4));
}

void TrainView::appendLoss(int64_t step, double loss)
{
    m_lossPlot->append(kLoss, double(step), loss);
    // An exponential moving average over ~20 steps: the trend under the per-batch noise.
    m_lossAverage = m_haveAverage ? 0.95 * m_lossAverage + 0.05 * loss : loss;
    m_haveAverage = true;
    m_lossPlot->append(kLossAverage, double(step), m_lossAverage);
}

void TrainView::onEvaluation(const EvaluationEvent& e)
{
    const SampleMetrics& m = e.metrics;
    if (e.ofReference) {
        m_samplePlot->setBaseline(kOddRatio, m.oddRatio);
        m_samplePlot->setBaseline(kVsr, m.vsr);
        appendLog(tr("reference: odd ratio %1, VSR %2 (%3 samples)").arg(m.oddRatio, 0, 'f', 4).arg(m.vsr, 0, 'f', 4).arg(m.samples));
        return;
    }
    m_samplePlot->append(kOddRatio, double(e.step), m.oddRatio);
    m_samplePlot->append(kVsr, double(e.step), m.vsr);
    appendLog(tr("step %1: odd ratio %2, VSR %3, odd among valid %4")
                  .arg(e.step)
                  .arg(m.oddRatio, 0, 'f', 4)
                  .arg(m.vsr, 0, 'f', 4)
                  .arg(m.oddShareValid, 0, 'f', 4));
}

void TrainView::onFinished(const FinishedEvent& e)
{
    setRunning(false);
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
        m_banner->setStyleSheet(QStringLiteral("QLabel { background: #fde2e1; color: #8c1d18; padding: 6px; }"));
        m_banner->setVisible(true);
    }
    m_rate->setText(tr("%1 · %2 steps in %3").arg(status).arg(e.stepsDone).arg(duration(e.elapsedSeconds)));
    reloadRuns();
    Q_EMIT statusMessage(tr("Training %1").arg(status));
    Q_EMIT runFinished(e.status);
}

void TrainView::appendLog(const QString& line)
{
    m_log->appendPlainText(QStringLiteral("%1  %2").arg(QTime::currentTime().toString(QStringLiteral("HH:mm:ss")), line));
}

void TrainView::reloadRuns()
{
    const QSignalBlocker block(m_runs);
    m_runs->clear();
    auto runs = m_store.runs();
    if (!runs)
        return;
    bool newest = true;
    for (auto it = runs->rbegin(); it != runs->rend(); ++it) {
        if (it->kind != "d2dpo")
            continue;
        // "running" is only certain for this window's own run (the newest, while it trains):
        // any other was cut short by a closed or killed process, or runs in another one.
        QString status = QString::fromStdString(it->status);
        if (it->status == "running" && !(newest && training()))
            status = tr("interrupted or running elsewhere");
        newest = false;
        auto* item = new QListWidgetItem(QStringLiteral("#%1 · %2 · %3 · %4")
                                             .arg(it->id)
                                             .arg(status,
                                                  QString::fromStdString(it->startedAt).left(16).replace(QLatin1Char('T'), QLatin1Char(' ')),
                                                  QString::fromStdString(it->device)),
                                         m_runs);
        item->setData(Qt::UserRole, qint64(it->id));
        if (!it->error.empty())
            item->setToolTip(QString::fromStdString(it->error));
        if (it->id == m_shownRun)
            m_runs->setCurrentItem(item);
    }
}

void TrainView::showRun(qint64 runId)
{
    auto record = m_store.run(runId);
    if (!record || !record->has_value()) {
        appendLog(tr("run %1 is not in the store").arg(runId));
        return;
    }
    clearPlots();
    m_shownRun = runId;
    auto series = [&](const char* name) {
        auto points = m_store.metricSeries(runId, name);
        return points ? points.value() : std::vector<std::pair<int64_t, double>>{};
    };
    const auto loss = series("loss");
    for (const auto& [step, value] : loss)
        appendLoss(step, value);
    const std::pair<MetricPlot*, std::pair<int, const char*>> curves[] = {
        {m_samplePlot, {kOddRatio, "odd_ratio"}},        {m_samplePlot, {kVsr, "vsr"}},
        {m_accuracyPlot, {kAccuracy, "rewards/accuracies"}}, {m_accuracyPlot, {kMargin, "rewards/margins"}},
        {m_rewardPlot, {kChosen, "rewards/chosen"}},      {m_rewardPlot, {kRejected, "rewards/rejected"}},
    };
    for (const auto& [plot, which] : curves)
        for (const auto& [step, value] : series(which.second))
            plot->append(which.first, double(step), value);
    for (const auto& [step, value] : series("reference/odd_ratio"))
        m_samplePlot->setBaseline(kOddRatio, value);
    for (const auto& [step, value] : series("reference/vsr"))
        m_samplePlot->setBaseline(kVsr, value);
    const RunRecord& run = *record.value();
    setStepRange(loss.empty() ? 1 : loss.back().first);
    m_banner->setVisible(false);
    m_rate->setText(tr("Showing run #%1 (%2)").arg(runId).arg(QString::fromStdString(run.status)));
    appendLog(tr("showing run #%1: %2, started %3 on %4%5")
                  .arg(runId)
                  .arg(QString::fromStdString(run.status), QString::fromStdString(run.startedAt),
                       QString::fromStdString(run.device),
                       run.error.empty() ? QString() : tr("; error: %1").arg(QString::fromStdString(run.error))));
}

} // namespace d2dpo::ui
