// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/models/newmodel/datamodeldialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

#include <utility>

#include "base/measurement.h"
#include "base/memoryestimate.h"
#include "facades/modelfiles.h"
#include "facades/taskinfo.h"
#include "jobs/pretrainjob.h"
#include "ui/models/newmodel/newmodelfile.h"
#include "ui/models/newmodel/newmodelverdict.h"
#include "ui/common/phaseforwarder.h"
#include "ui/train/trainworker.h"
#include "ui/common/timeleft.h"

namespace d2dpo::ui {

namespace {

/// Lines a summary may take before it pushes what is below it (a long path's error wraps to three).
constexpr int kSummaryLines = 3;

/// Pretraining from a data file as a training job: it ends as completed, stopped or failed. The
/// step-less phases come as PhaseForwarder's log lines, the evaluation's batches as progress
/// events counting samples.
FinishedEvent pretrainAsTrainJob(const PretrainJobSpec& job, TrainListener& listener, const StopToken& stop)
{
    PhaseForwarder forward(listener);
    FinishedEvent done;
    auto outcome = runPretrainJob(job, forward, stop, [&forward](double drawn, int64_t total) {
        forward.onSamplingProgress(drawn, total);
    });
    if (!outcome) {
        done.status = RunStatus::Failed;
        done.error = outcome.error();
    } else {
        done.status = outcome->stopped ? RunStatus::Stopped : RunStatus::Completed;
        done.stepsDone = outcome->steps;
        if (!outcome->stopped) // the dialog says the new model's figures, and whether it can be labelled
            listener.onEvaluation({outcome->steps, outcome->metrics, true});
        if (!outcome->stopped) // a Cancel writes nothing (PretrainJobSpec::keepWhenStopped)
            done.lastCheckpointPath = job.outputPath;
    }
    return done;
}

} // namespace

DataModelDialog::DataModelDialog(const QString& storePath, const QString& modelFolder, QWidget* parent)
    : QDialog(parent)
    , m_storePath(storePath)
    , m_modelFolder(modelFolder)
{
    setWindowTitle(tr("New model from a data file"));
    m_file = new QLineEdit(this);
    m_file->setObjectName(QStringLiteral("dataFile"));
    m_file->setPlaceholderText(tr("A FASTA file or one sequence per line"));
    auto* browse = new QPushButton(tr("Browse…"), this);
    auto* fileRow = new QHBoxLayout;
    fileRow->addWidget(m_file, 1);
    fileRow->addWidget(browse);
    m_vocabulary = new QComboBox(this);
    m_vocabulary->addItem(tr("read from the data"), QStringLiteral("data"));
    m_vocabulary->addItem(tr("protein (20 amino acids; X when the data has it)"), QStringLiteral("protein"));
    m_vocabulary->addItem(tr("DNA (ACGT)"), QStringLiteral("dna"));
    m_vocabulary->addItem(tr("RNA (ACGU)"), QStringLiteral("rna"));
    m_validity = new QComboBox(this);
    m_validity->addItem(tr("well-formed: its symbols, pads only at the end, a length the data has"),
                        QStringLiteral("symbols"));
    m_validity->addItem(tr("one of the training sequences (for words: a real word)"), QStringLiteral("in-data"));
    m_rule = new QLineEdit(this);
    m_rule->setObjectName(QStringLiteral("rule"));
    m_rule->setPlaceholderText(tr("motif:^[aeiou], composition:GC or in-data (optional)"));
    m_steps = new QSpinBox(this);
    m_steps->setRange(10, 1'000'000);
    m_steps->setValue(3000);
    m_steps->setSingleStep(500);
    m_size = new QComboBox(this);
    m_size->setObjectName(QStringLiteral("modelSize"));
    // d_model, layers, heads: the native transformer at the sizes the README's words table measures.
    m_size->addItem(tr("small: d_model 64, 2 layers, 4 heads (fast on a laptop CPU)"), QVariantList{64, 2, 4});
    m_size->addItem(tr("medium: d_model 128, 4 layers, 4 heads"), QVariantList{128, 4, 4});
    m_size->addItem(tr("large: d_model 256, 6 layers, 8 heads (wants a GPU)"), QVariantList{256, 6, 8});
    m_sizeNote = new QLabel(this);
    m_sizeNote->setObjectName(QStringLiteral("sizeNote"));
    m_sizeNote->setWordWrap(true); // a long note wraps rather than widening the dialog's fields
    m_sizeNote->setMinimumHeight(2 * fontMetrics().lineSpacing());
    m_sizeNote->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    // The summary appears when a file is read: its lines are kept from the start, so reading a
    // file (or failing to) moves no field under the pointer.
    m_summary = new QLabel(tr("Choose a file."), this);
    m_summary->setObjectName(QStringLiteral("summary"));
    m_summary->setWordWrap(true);
    m_summary->setMinimumHeight(kSummaryLines * fontMetrics().lineSpacing());
    m_summary->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_phase = new QLabel(this);
    m_phase->setObjectName(QStringLiteral("phase"));
    m_phase->setMinimumHeight(fontMetrics().lineSpacing());
    m_progress = new QProgressBar(this);
    QSizePolicy keep = m_progress->sizePolicy();
    keep.setRetainSizeWhenHidden(true); // the bar's row is kept while no job runs
    m_progress->setSizePolicy(keep);
    m_progress->setVisible(false);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
    QPushButton* create = m_buttons->addButton(tr("Create"), QDialogButtonBox::AcceptRole);
    create->setObjectName(QStringLiteral("createButton"));

    auto* form = new QFormLayout;
    form->addRow(tr("Data file"), fileRow);
    form->addRow(tr("Vocabulary"), m_vocabulary);
    form->addRow(tr("A valid sample is"), m_validity);
    form->addRow(tr("Rule"), m_rule);
    form->addRow(tr("Model size"), m_size);
    form->addRow(QString(), m_sizeNote);
    form->addRow(tr("Pretraining steps"), m_steps);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_summary);
    layout->addWidget(m_phase);
    layout->addWidget(m_progress);
    layout->addStretch(1); // a taller dialog grows here, not between the fields
    layout->addWidget(m_buttons);
    resize(640, sizeHint().height());

    connect(browse, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Sequences"), {},
                                                          tr("Sequences (*.fasta *.fa *.faa *.txt);;All files (*)"));
        if (!path.isEmpty())
            setDataFile(path);
    });
    connect(m_file, &QLineEdit::editingFinished, this, &DataModelDialog::readFile);
    for (QComboBox* box : {m_vocabulary, m_validity})
        connect(box, &QComboBox::currentIndexChanged, this, &DataModelDialog::readFile);
    connect(m_rule, &QLineEdit::editingFinished, this, &DataModelDialog::readFile);
    connect(m_size, &QComboBox::currentIndexChanged, this, &DataModelDialog::readFile);
    describeSize(16);
    connect(m_buttons, &QDialogButtonBox::accepted, this, [this] { start(); });
    connect(m_buttons, &QDialogButtonBox::rejected, this, &DataModelDialog::reject);
    m_runner = new TrainRunner(this);
    connect(m_runner, &TrainRunner::progress, this,
            [this](const ProgressEvent& e) { onProgress(e.step, e.totalSteps, e.loss); });
    connect(m_runner, &TrainRunner::logLine, this, [this](const QString& line) {
        const auto is = [&line](const char* phase) {
            return line == QString::fromStdString(PhaseForwarder::phaseLine(phase));
        };
        if (is("evaluate-reference"))
            enterPhase(Phase::Evaluating, m_samples);
        else if (is("write"))
            enterPhase(Phase::Writing, 0);
    });
    connect(m_runner, &TrainRunner::evaluated, this, &DataModelDialog::onMeasured);
    connect(m_runner, &TrainRunner::finished, this, &DataModelDialog::onFinished);
    restoreFields();
    if (!m_file->text().isEmpty())
        readFile();
}

DataModelDialog::~DataModelDialog()
{
    delete m_runner; // stops its job and waits for it, before the widgets it reports to go
}

bool DataModelDialog::busy() const { return m_runner->running(); }

void DataModelDialog::setDataFile(const QString& path)
{
    m_file->setText(path);
    readFile();
}

void DataModelDialog::readFile()
{
    m_fileUsable = false;
    if (m_file->text().isEmpty())
        return;
    SequenceFileOptions options;
    options.vocabulary = m_vocabulary->currentData().toString().toStdString();
    options.validity = m_validity->currentData().toString().toStdString();
    options.rule = m_rule->text().trimmed().toStdString();
    auto read = readDataFile(m_file->text().toStdString(), options);
    if (read) {
        // The rule is checked by making the task (a bad pattern is named here, not after training).
        auto task = TaskInfo::fromConfig(read->task);
        if (!task)
            read = makeError(task.error());
    }
    if (!read) {
        m_error = QString::fromStdString(read.error());
        m_summary->setText(QStringLiteral("<span style='color:#b03a2e'>%1</span>").arg(m_error.toHtmlEscaped()));
        return;
    }
    m_fileUsable = true;
    m_error.clear();
    m_summary->setText(QString::fromStdString(read->report.summary()));
    describeSize(read->task.length);
}

ModelConfig DataModelDialog::chosenModel() const
{
    const QVariantList shape = m_size->currentData().toList();
    ModelConfig model;
    model.dModel = shape.value(0).toInt();
    model.layers = shape.value(1).toInt();
    model.heads = shape.value(2).toInt();
    return model;
}

void DataModelDialog::describeSize(int length)
{
    ModelSpec spec;
    spec.task.length = length;
    spec.model = chosenModel();
    const double mib = double(estimateDpoPeakBytes(spec, DpoConfig{}, SamplingConfig{})) / double(1 << 20);
    m_sizeNote->setText(tr("about %1 parameters; a D2-DPO step (batch 64) needs about %2 MiB at length %3")
                            .arg(QLocale().toString(qlonglong(estimateParameterCount(spec))))
                            .arg(mib, 0, 'f', 0)
                            .arg(length));
}

bool DataModelDialog::start()
{
    if (busy())
        return false;
    readFile();
    if (!m_fileUsable)
        return false;
    SequenceFileOptions options;
    options.vocabulary = m_vocabulary->currentData().toString().toStdString();
    options.validity = m_validity->currentData().toString().toStdString();
    options.rule = m_rule->text().trimmed().toStdString();
    auto read = readDataFile(m_file->text().toStdString(), options);
    if (!read)
        return false;
    const QString base = QFileInfo(m_file->text()).completeBaseName();
    m_created = newModelFile(m_modelFolder, base);
    PretrainJobSpec job;
    job.spec.task = read->task;
    job.spec.model = chosenModel();
    job.pretrain.steps = m_steps->value();
    job.sampling.steps = 64;
    // As many samples as fit in about 30 s at the new model's cost (the Models view's Auto), in
    // batches that report progress; a Cancel is heard between passes.
    job.evaluationSamples = kMeasurementSamples;
    job.evaluationSeconds = kMeasurementSeconds;
    job.sampling.batch = int(evaluationBatchFor(job.evaluationSamples));
    job.keepWhenStopped = false; // Cancel means no new model
    job.outputPath = m_created.toStdString();
    job.storePath = m_storePath.toStdString();
    job.modelName = base.toStdString() + " (pretrained)";
    m_samples = 0; // fitted by the job: its first progress says the count
    m_stopping = false;
    m_error.clear();
    m_madeFigures.clear();
    m_madeTooWeak = false;
    resetButtons(m_buttons); // "Close" after a weak model
    saveFields();
    for (QAbstractButton* b : m_buttons->buttons())
        if (m_buttons->buttonRole(b) == QDialogButtonBox::AcceptRole)
            b->setEnabled(false);
    if (!m_runner->start(
            [job](TrainListener& listener, const StopToken& stop) { return pretrainAsTrainJob(job, listener, stop); }))
        return false;
    enterPhase(Phase::Pretraining, m_steps->value());
    return true;
}

void DataModelDialog::enterPhase(Phase phase, qint64 total)
{
    m_current = phase;
    m_phaseClock.start();
    m_progress->setVisible(phase != Phase::Idle);
    m_progress->setRange(0, int(total)); // 0..0: busy, for a phase with nothing to count
    m_progress->setValue(0);
    switch (phase) {
    case Phase::Idle:
        m_phase->clear();
        break;
    case Phase::Pretraining:
        m_progress->setFormat(tr("%v / %m steps"));
        m_phase->setText(tr("Pretraining: 0 / %L1 steps…").arg(total));
        break;
    case Phase::Evaluating: // busy while one pass is timed; the first progress gives the count
        m_phase->setText(tr("Evaluating the model: timing one pass to choose how many samples fit in about %1 s…")
                             .arg(kMeasurementSeconds));
        break;
    case Phase::Writing:
        m_phase->setText(m_storePath.isEmpty() ? tr("Writing the model…")
                                               : tr("Writing the model and adding it to the store…"));
        break;
    }
    if (m_stopping)
        m_phase->setText(tr("Stopping…"));
}

void DataModelDialog::onProgress(qint64 done, qint64 total, double loss)
{
    if (m_current != Phase::Pretraining && m_current != Phase::Evaluating)
        return;
    m_progress->setRange(0, int(total));
    m_progress->setValue(int(done));
    if (m_current == Phase::Evaluating) { // in hundredths of a sample (PhaseForwarder::onSamplingProgress)
        m_samples = total / PhaseForwarder::kStepsPerSample;
        m_progress->setFormat(tr("%1 / %2 samples").arg(done / PhaseForwarder::kStepsPerSample).arg(m_samples));
    }
    if (m_stopping)
        return; // "Stopping…" stays until the job ends
    if (m_current == Phase::Pretraining) {
        m_phase->setText(tr("Pretraining: %L1 / %L2 steps · loss %3 · %4")
                             .arg(done)
                             .arg(total)
                             .arg(loss, 0, 'f', 3)
                             .arg(timeLeft(m_phaseClock, double(done), total)));
        return;
    }
    const double drawn = double(done) / PhaseForwarder::kStepsPerSample;
    m_phase->setText(tr("Evaluating the model: %L1 / %L2 samples · %3")
                         .arg(qint64(drawn))
                         .arg(m_samples)
                         .arg(timeLeft(m_phaseClock, drawn, m_samples)));
}

void DataModelDialog::onFinished(const FinishedEvent& done)
{
    enterPhase(Phase::Idle, 0);
    for (QAbstractButton* b : m_buttons->buttons())
        b->setEnabled(true);
    // A Cancel that came too late (the model was being written) leaves the model made: say so.
    if (std::exchange(m_stopping, false) && done.status != RunStatus::Completed) {
        QDialog::reject();
        return;
    }
    if (done.status == RunStatus::Failed) {
        m_error = QString::fromStdString(done.error);
        m_summary->setText(QStringLiteral("<span style='color:#b03a2e'>%1</span>").arg(m_error.toHtmlEscaped()));
        return;
    }
    Q_EMIT modelCreated(m_created);
    if (m_madeTooWeak) { // made and stored, but said before anyone labels with it: the dialog stays open
        keepOpenOnAdvice(m_buttons);
        return;
    }
    accept();
}

void DataModelDialog::onMeasured(const EvaluationEvent& made)
{
    const NewModelVerdict verdict = newModelVerdict(made.metrics, tr("Made"));
    m_madeFigures = verdict.figures;
    m_madeTooWeak = verdict.tooWeak;
    m_summary->setText(verdict.summaryHtml);
}

void DataModelDialog::reject()
{
    if (busy() && m_current == Phase::Writing) {
        // The write runs to its end (a half-written model would be worse than one): say what happens.
        m_phase->setText(tr("Too late to cancel: the model is being written and is kept (delete it in the Models "
                            "view if you do not want it)…"));
        return;
    }
    if (busy()) {
        m_stopping = true;
        m_runner->requestStop(); // the job ends before its next step or sampler batch; the dialog closes then
        m_phase->setText(tr("Stopping…"));
        return;
    }
    QDialog::reject();
}

} // namespace d2dpo::ui
