// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/models/newmodel/importmodeldialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QSpinBox>
#include <QPushButton>
#include <QVBoxLayout>

#include <utility>

#include "base/configlimits.h"
#include "base/measurement.h"
#include "base/samplebudget.h"
#include "jobs/importjob.h"
#include "ui/models/newmodel/filefield.h"
#include "ui/models/newmodel/importasjob.h"
#include "ui/models/newmodel/modelrecognition.h"
#include "ui/models/newmodel/newmodelfile.h"
#include "ui/models/newmodel/newmodelverdict.h"
#include "ui/common/phaseforwarder.h"
#include "ui/train/trainworker.h"
#include "ui/common/timeleft.h"

namespace d2dpo::ui {

ImportModelDialog::ImportModelDialog(const QString& storePath, const QString& modelFolder, QWidget* parent)
    : QDialog(parent)
    , m_storePath(storePath)
    , m_modelFolder(modelFolder)
{
    setWindowTitle(tr("Import a model"));
    // A published checkpoint is a folder (model.safetensors, config.json, vocab.txt): Folder… too.
    auto* modelField = new FileField(QStringLiteral("torchScriptFile"),
                                     tr("ESM2/DPLM/MDLM weights (folder or model.safetensors), or a torch.jit.save file"),
                                     tr("Models (*.safetensors *.pt *.pth *.ts);;All files (*)"), /*folders=*/true, this);
    m_torchScript = modelField->edit();
    auto* vocabularyField = new FileField(QStringLiteral("vocabularyFile"),
                                          tr("Vocabulary file (JSON): symbols, mask, pad, begin, end"),
                                          tr("JSON (*.json);;All files (*)"), /*folders=*/false, this);
    m_vocabulary = vocabularyField->edit();
    m_recognised = new QLabel(this);
    m_recognised->setObjectName(QStringLiteral("recognised"));
    m_recognised->setMinimumHeight(fontMetrics().lineSpacing()); // its row is kept: the form does not jump
    auto* dataField = new FileField(QStringLiteral("dataFile"), tr("Training sequences (FASTA or one per line), optional"),
                                    tr("Sequences (*.fasta *.fa *.faa *.txt);;All files (*)"), /*folders=*/false, this);
    m_data = dataField->edit();
    m_task = new QComboBox(this);
    m_task->setObjectName(QStringLiteral("task"));
    m_task->addItem(tr("sequences (from the data file, or of the lengths below)"), QStringLiteral("sequences"));
    m_task->addItem(tr("binary integers (the paper's task, 16 bits)"), QStringLiteral("binary-integers"));
    m_validity = new QComboBox(this);
    m_validity->addItem(tr("well-formed: its symbols, pads only at the end, a length the data has"),
                        QStringLiteral("symbols"));
    m_validity->addItem(tr("one of the training sequences"), QStringLiteral("in-data"));
    // Without a data file the task knows only its symbols: the lengths come from the user.
    m_shortest = new QSpinBox(this);
    m_shortest->setObjectName(QStringLiteral("shortest"));
    m_shortest->setRange(0, limits::kMaxLength);
    m_shortest->setSpecialValueText(tr("auto (1 with a pad, else the longest)"));
    m_longest = new QSpinBox(this);
    m_longest->setObjectName(QStringLiteral("longest"));
    m_longest->setRange(1, limits::kMaxLength);
    m_longest->setValue(64);
    m_rule = new QLineEdit(this);
    m_rule->setObjectName(QStringLiteral("rule"));
    m_rule->setPlaceholderText(tr("odd, motif:^M, composition:GC or in-data (optional)"));
    m_evaluationSamples = new QSpinBox(this);
    m_evaluationSamples->setObjectName(QStringLiteral("evaluationSamples"));
    m_evaluationSamples->setRange(-1, int(limits::kMaxEvalSamples));
    m_evaluationSamples->setSingleStep(100);
    m_evaluationSamples->setSpecialValueText(tr("Auto (about %1 s)").arg(kMeasurementSeconds));
    m_evaluationSamples->setValue(-1);
    m_evaluationSamples->setToolTip(tr("Samples drawn to measure the imported model (VSR, the rule's share). Auto: as "
                                       "many as fit in about %1 s at the model's cost, one pass timed first (at "
                                       "least %2, at most %3). 0: not measured (d2dpo eval measures it later).")
                                        .arg(kMeasurementSeconds)
                                        .arg(kFewestFittedSamples)
                                        .arg(kMeasurementSamples));
    m_summary = new QLabel(tr("Choose the model: published ESM2, DPLM or MDLM weights, or TorchScript and its vocabulary (README: Bring your own model)."), this);
    m_summary->setObjectName(QStringLiteral("summary"));
    m_summary->setWordWrap(true);
    m_phase = new QLabel(this);
    m_phase->setObjectName(QStringLiteral("phase"));
    m_phase->setMinimumHeight(fontMetrics().lineSpacing());
    m_progress = new QProgressBar(this);
    QSizePolicy keep = m_progress->sizePolicy();
    keep.setRetainSizeWhenHidden(true); // the bar's row is kept while no job runs
    m_progress->setSizePolicy(keep);
    m_progress->setVisible(false);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
    QPushButton* import = m_buttons->addButton(tr("Import"), QDialogButtonBox::AcceptRole);
    import->setObjectName(QStringLiteral("importButton"));

    auto* form = new QFormLayout;
    form->addRow(tr("Model"), modelField);
    form->addRow(QString(), m_recognised);
    form->addRow(tr("Vocabulary"), vocabularyField);
    form->addRow(tr("Task"), m_task);
    form->addRow(tr("Data file"), dataField);
    auto* lengthRow = new QHBoxLayout;
    lengthRow->addWidget(new QLabel(tr("shortest"), this));
    lengthRow->addWidget(m_shortest, 1);
    lengthRow->addWidget(new QLabel(tr("longest"), this));
    lengthRow->addWidget(m_longest);
    form->addRow(tr("Lengths without data"), lengthRow);
    form->addRow(tr("A valid sample is"), m_validity);
    form->addRow(tr("Rule"), m_rule);
    form->addRow(tr("Evaluation samples"), m_evaluationSamples);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_summary);
    layout->addWidget(m_phase);
    layout->addWidget(m_progress);
    layout->addStretch(1); // a taller dialog grows here, not between the fields
    layout->addWidget(m_buttons);
    resize(680, sizeHint().height());

    const auto enableFields = [this, dataField] {
        const bool sequences = m_task->currentData().toString() == QLatin1String("sequences");
        const bool withoutData = sequences && m_data->text().trimmed().isEmpty();
        dataField->setEnabled(sequences);
        m_validity->setEnabled(sequences && !withoutData); // without data only well-formedness can be checked
        m_shortest->setEnabled(withoutData);
        m_longest->setEnabled(withoutData);
    };
    connect(m_task, &QComboBox::currentIndexChanged, this, enableFields);
    connect(m_torchScript, &QLineEdit::textChanged, this, [this] { recogniseModel(); });
    connect(m_data, &QLineEdit::textChanged, this, enableFields);
    enableFields();
    connect(m_buttons, &QDialogButtonBox::accepted, this, [this] { start(); });
    connect(m_buttons, &QDialogButtonBox::rejected, this, &ImportModelDialog::reject);
    m_runner = new TrainRunner(this);
    connect(m_runner, &TrainRunner::progress, this, [this](const ProgressEvent& e) { onProgress(e.step, e.totalSteps); });
    connect(m_runner, &TrainRunner::logLine, this, &ImportModelDialog::onLogLine);
    connect(m_runner, &TrainRunner::evaluated, this, &ImportModelDialog::onMeasured);
    connect(m_runner, &TrainRunner::finished, this, &ImportModelDialog::onFinished);
}

ImportModelDialog::~ImportModelDialog()
{
    delete m_runner; // stops its job and waits for it, before the widgets it reports to go
}

bool ImportModelDialog::busy() const { return m_runner->running(); }

void ImportModelDialog::setTorchScriptFile(const QString& path) { m_torchScript->setText(path); }
void ImportModelDialog::setModelPath(const QString& path) { m_torchScript->setText(path); }

bool ImportModelDialog::modelIsPublishedWeights() const { return isWeightsPath(m_torchScript->text().trimmed()); }

void ImportModelDialog::recogniseModel()
{
    // Published weights name their architecture at once (from config.json alone: a few bytes, read
    // here); their vocabulary comes from vocab.txt unless a contract is given.
    const bool weights = modelIsPublishedWeights();
    const QString recognised = modelRecognition(m_torchScript->text().trimmed());
    const bool mdlm = recognised.contains(QStringLiteral("MDLM:"));
    m_vocabulary->setPlaceholderText(
        !weights ? tr("Vocabulary file (JSON): symbols, mask, pad, begin, end")
        : mdlm   ? tr("optional with a vocab.txt beside the weights (its one-character tokens, [MASK]); else a contract")
                 : tr("optional: made from vocab.txt (the 20 amino acids, <mask>, <cls> … <eos>)"));
    m_recognised->setText(recognised);
    // The vocabulary file beside a TorchScript model is proposed; never over what the user typed.
    const QString typed = m_vocabulary->text().trimmed();
    if (typed.isEmpty() || typed == m_proposedVocabulary) {
        m_proposedVocabulary = weights ? QString() : vocabularyBeside(m_torchScript->text().trimmed());
        m_vocabulary->setText(m_proposedVocabulary);
    }
}
void ImportModelDialog::setVocabularyFile(const QString& path) { m_vocabulary->setText(path); }
void ImportModelDialog::setDataFile(const QString& path) { m_data->setText(path); }
void ImportModelDialog::setTask(const QString& task) { m_task->setCurrentIndex(m_task->findData(task)); }
void ImportModelDialog::setEvaluationSamples(int samples) { m_evaluationSamples->setValue(samples); }

void ImportModelDialog::showError(const QString& message)
{
    m_error = message;
    m_summary->setText(QStringLiteral("<span style='color:#b03a2e'>%1</span>").arg(message.toHtmlEscaped()));
}

bool ImportModelDialog::start()
{
    if (busy())
        return false;
    const bool sequences = m_task->currentData().toString() == QLatin1String("sequences");
    const bool weights = modelIsPublishedWeights();
    if (m_torchScript->text().trimmed().isEmpty() || (!weights && m_vocabulary->text().trimmed().isEmpty())) {
        showError(tr("Choose the model (published weights, or TorchScript with its vocabulary file)."));
        return false;
    }
    QFileInfo modelFile(m_torchScript->text().trimmed());
    const QString base = weights && (modelFile.isDir() || modelFile.fileName() == QLatin1String("model.safetensors"))
                             ? (modelFile.isDir() ? QFileInfo(modelFile.absoluteFilePath()).fileName()
                                                  : modelFile.absoluteDir().dirName())
                             : modelFile.completeBaseName();
    m_created = newModelFile(m_modelFolder, base);
    ImportJobSpec job;
    (weights ? job.weightsPath : job.torchScriptPath) = m_torchScript->text().trimmed().toStdString();
    job.vocabularyPath = m_vocabulary->text().trimmed().toStdString();
    job.task = m_task->currentData().toString().toStdString();
    job.data.validity = m_validity->currentData().toString().toStdString();
    if (sequences)
        job.dataPath = m_data->text().trimmed().toStdString();
    if (sequences && job.dataPath.empty()) {
        job.data.maxLength = m_longest->value();
        job.minLength = m_shortest->value();
        job.data.validity = "symbols";
    }
    job.data.rule = m_rule->text().trimmed().toStdString();
    job.sampling.steps = 64;
    const bool fitted = m_evaluationSamples->value() < 0;
    job.evaluationSamples = fitted ? kMeasurementSamples : m_evaluationSamples->value();
    job.evaluationSeconds = fitted ? kMeasurementSeconds : 0;
    job.sampling.batch = int(evaluationBatchFor(std::max<int64_t>(1, job.evaluationSamples)));
    job.keepWhenStopped = false; // Cancel means no new model
    job.outputPath = m_created.toStdString();
    job.storePath = m_storePath.toStdString();
    job.modelName = base.toStdString() + " (imported)";
    m_samples = fitted ? 0 : job.evaluationSamples;
    m_error.clear();
    m_madeFigures.clear();
    m_madeTooWeak = false;
    resetButtons(m_buttons); // "Close" after a weak model
    m_stopping = false;
    for (QAbstractButton* b : m_buttons->buttons())
        if (m_buttons->buttonRole(b) == QDialogButtonBox::AcceptRole)
            b->setEnabled(false);
    m_summary->setText(tr("Importing %1…").arg(QFileInfo(m_torchScript->text()).fileName()));
    if (!m_runner->start(
            [job](TrainListener& listener, const StopToken& stop) { return importAsTrainJob(job, listener, stop); }))
        return false;
    enterPhase(Phase::Checking);
    return true;
}

void ImportModelDialog::enterPhase(Phase phase)
{
    m_current = phase;
    m_phaseClock.start();
    m_progress->setVisible(phase != Phase::Idle);
    switch (phase) {
    case Phase::Idle:
        m_phase->clear();
        break;
    case Phase::Checking: // the three steps before the measurement share one bar: 0, 1, 2 of 3 done
    case Phase::Loading:
    case Phase::Probing: {
        const int step = int(phase) - int(Phase::Checking);
        m_progress->setRange(0, 3);
        m_progress->setValue(step);
        m_progress->setFormat(tr("step %1 of %2").arg(step + 1).arg(3));
        const bool weights = modelIsPublishedWeights();
        m_phase->setText(phase == Phase::Checking ? tr("Checking the vocabulary, the data and the file…")
                         : phase == Phase::Loading
                             ? (weights ? tr("Building the network from its weights…") : tr("Loading the TorchScript model…"))
                             : (weights ? tr("Checking its logits…") : tr("Probing the model (its output, its gradients)…")));
        break;
    }
    case Phase::Evaluating:
        if (m_samples == 0) { // a fitted count: the job times one pass first, then says the count
            m_progress->setRange(0, 0);
            m_phase->setText(tr("Evaluating the model: timing one pass to choose how many samples fit in about %1 s…")
                                 .arg(kMeasurementSeconds));
            break;
        }
        m_progress->setRange(0, int(m_samples * PhaseForwarder::kStepsPerSample));
        m_progress->setValue(0);
        m_progress->setFormat(tr("%1 / %2 samples").arg(0).arg(m_samples));
        m_phase->setText(tr("Evaluating the model: 0 / %L1 samples…").arg(m_samples));
        break;
    case Phase::Writing:
        m_progress->setRange(0, 0); // busy: the write has nothing to count
        m_phase->setText(m_storePath.isEmpty() ? tr("Writing the model…")
                                               : tr("Writing the model and adding it to the store…"));
        break;
    }
    if (m_stopping)
        m_phase->setText(tr("Stopping…"));
}

void ImportModelDialog::onProgress(qint64 done, qint64 total)
{
    switch (m_current) {
    case Phase::Checking: // the step just done; the next one begins
    case Phase::Loading:
        enterPhase(done >= 2 ? Phase::Probing : Phase::Loading);
        return;
    case Phase::Evaluating:
        break;
    default:
        return;
    }
    // Counted in hundredths of a sample (PhaseForwarder::onSamplingProgress): the passes move it.
    const double drawn = double(done) / PhaseForwarder::kStepsPerSample;
    m_samples = total / PhaseForwarder::kStepsPerSample;
    m_progress->setRange(0, int(total));
    m_progress->setValue(int(done));
    m_progress->setFormat(tr("%1 / %2 samples").arg(qint64(drawn)).arg(m_samples));
    if (!m_stopping) // "Stopping…" stays until the job ends
        m_phase->setText(tr("Evaluating the model: %L1 / %L2 samples · %3")
                             .arg(qint64(drawn))
                             .arg(m_samples)
                             .arg(timeLeft(m_phaseClock, drawn, m_samples)));
}

void ImportModelDialog::onLogLine(const QString& line)
{
    const auto is = [&line](const char* phase) {
        return line == QString::fromStdString(PhaseForwarder::phaseLine(phase));
    };
    if (is("evaluate-reference"))
        enterPhase(Phase::Evaluating);
    else if (is("write"))
        enterPhase(Phase::Writing);
    else
        m_summary->setText(line); // what was read, loaded, probed, written
}

void ImportModelDialog::onFinished(const FinishedEvent& done)
{
    enterPhase(Phase::Idle);
    for (QAbstractButton* b : m_buttons->buttons())
        b->setEnabled(true);
    // A Cancel that came too late (the model was being written) leaves the model made.
    if (std::exchange(m_stopping, false) && done.status != RunStatus::Completed) {
        QDialog::reject();
        return;
    }
    if (done.status == RunStatus::Failed) {
        showError(QString::fromStdString(done.error));
        return;
    }
    if (done.status == RunStatus::Stopped) // nothing was written: nothing to announce
        return;
    Q_EMIT modelImported(m_created);
    if (m_madeTooWeak) { // imported, but said before anyone labels with it: the dialog stays open
        keepOpenOnAdvice(m_buttons);
        return;
    }
    accept();
}

void ImportModelDialog::onMeasured(const EvaluationEvent& made)
{
    // An imported model this weak usually means a vocabulary that does not match the model's ids.
    const NewModelVerdict verdict = newModelVerdict(
        made.metrics, tr("Imported"), tr("Check that the vocabulary file gives the model's own token ids."));
    m_madeFigures = verdict.figures;
    m_madeTooWeak = verdict.tooWeak;
    m_summary->setText(verdict.summaryHtml);
}

void ImportModelDialog::reject()
{
    if (busy() && m_current == Phase::Writing) {
        // The write runs to its end (a half-written model would be worse than one): say what happens.
        m_phase->setText(tr("Too late to cancel: the model is being written and is kept (delete it in the Models "
                            "view if you do not want it)…"));
        return;
    }
    if (busy()) {
        m_stopping = true;
        m_runner->requestStop(); // the import ends after its step in flight or sampler batch; the dialog closes then
        m_phase->setText(tr("Stopping…"));
        return;
    }
    QDialog::reject();
}

} // namespace d2dpo::ui
