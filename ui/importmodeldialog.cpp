// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/importmodeldialog.h"

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

#include "jobs/importjob.h"
#include "ui/newmodelfile.h"
#include "ui/phaseforwarder.h"
#include "ui/trainworker.h"

namespace d2dpo::ui {

namespace {

FinishedEvent importAsTrainJob(const ImportJobSpec& job, TrainListener& listener, const StopToken& stop)
{
    PhaseForwarder forward(listener);
    FinishedEvent done;
    auto outcome = runImportJob(job, forward, stop);
    if (!outcome) {
        done.status = RunStatus::Failed;
        done.error = outcome.error();
    } else {
        done.status = RunStatus::Completed;
        done.lastCheckpointPath = job.outputPath;
    }
    return done;
}

} // namespace

QLineEdit* ImportModelDialog::fileField(const QString& objectName, const QString& placeholder, const QString& filter)
{
    auto* field = new QLineEdit(this);
    field->setObjectName(objectName);
    field->setPlaceholderText(placeholder);
    auto* browse = new QPushButton(tr("Browse…"), this);
    connect(browse, &QPushButton::clicked, this, [this, field, filter] {
        const QString path = QFileDialog::getOpenFileName(this, field->placeholderText(), {}, filter);
        if (!path.isEmpty())
            field->setText(path);
    });
    field->setProperty("browseButton", QVariant::fromValue<QObject*>(browse));
    return field;
}

ImportModelDialog::ImportModelDialog(const QString& storePath, const QString& modelFolder, QWidget* parent)
    : QDialog(parent)
    , m_storePath(storePath)
    , m_modelFolder(modelFolder)
{
    setWindowTitle(tr("Import a model (TorchScript)"));
    m_torchScript = fileField(QStringLiteral("torchScriptFile"), tr("torch.jit.save file: forward(tokens, t) -> logits"),
                              tr("TorchScript (*.pt *.pth *.ts);;All files (*)"));
    m_vocabulary = fileField(QStringLiteral("vocabularyFile"), tr("Vocabulary file (JSON): symbols, mask, pad, begin, end"),
                             tr("JSON (*.json);;All files (*)"));
    m_data = fileField(QStringLiteral("dataFile"), tr("Training sequences (FASTA or one per line), optional"),
                       tr("Sequences (*.fasta *.fa *.faa *.txt);;All files (*)"));
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
    m_shortest->setRange(0, 512);
    m_shortest->setSpecialValueText(tr("auto (1 with a pad, else the longest)"));
    m_longest = new QSpinBox(this);
    m_longest->setObjectName(QStringLiteral("longest"));
    m_longest->setRange(1, 512);
    m_longest->setValue(64);
    m_rule = new QLineEdit(this);
    m_rule->setObjectName(QStringLiteral("rule"));
    m_rule->setPlaceholderText(tr("odd, motif:^M, composition:GC or in-data (optional)"));
    m_summary = new QLabel(tr("Choose the model and its vocabulary (README: Bring your own model)."), this);
    m_summary->setObjectName(QStringLiteral("summary"));
    m_summary->setWordWrap(true);
    m_progress = new QProgressBar(this);
    m_progress->setVisible(false);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
    QPushButton* import = m_buttons->addButton(tr("Import"), QDialogButtonBox::AcceptRole);
    import->setObjectName(QStringLiteral("importButton"));

    auto* form = new QFormLayout;
    for (auto [label, field] : {std::pair{tr("TorchScript model"), m_torchScript},
                                std::pair{tr("Vocabulary"), m_vocabulary}}) {
        auto* row = new QHBoxLayout;
        row->addWidget(field, 1);
        row->addWidget(qobject_cast<QWidget*>(field->property("browseButton").value<QObject*>()));
        form->addRow(label, row);
    }
    form->addRow(tr("Task"), m_task);
    auto* dataRow = new QHBoxLayout;
    dataRow->addWidget(m_data, 1);
    dataRow->addWidget(qobject_cast<QWidget*>(m_data->property("browseButton").value<QObject*>()));
    form->addRow(tr("Data file"), dataRow);
    auto* lengthRow = new QHBoxLayout;
    lengthRow->addWidget(new QLabel(tr("shortest"), this));
    lengthRow->addWidget(m_shortest, 1);
    lengthRow->addWidget(new QLabel(tr("longest"), this));
    lengthRow->addWidget(m_longest);
    form->addRow(tr("Lengths without data"), lengthRow);
    form->addRow(tr("A valid sample is"), m_validity);
    form->addRow(tr("Rule"), m_rule);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_summary);
    layout->addWidget(m_progress);
    layout->addWidget(m_buttons);
    resize(680, sizeHint().height());

    const auto enableFields = [this] {
        const bool sequences = m_task->currentData().toString() == QLatin1String("sequences");
        const bool withoutData = sequences && m_data->text().trimmed().isEmpty();
        m_data->setEnabled(sequences);
        qobject_cast<QWidget*>(m_data->property("browseButton").value<QObject*>())->setEnabled(sequences);
        m_validity->setEnabled(sequences && !withoutData); // without data only well-formedness can be checked
        m_shortest->setEnabled(withoutData);
        m_longest->setEnabled(withoutData);
    };
    connect(m_task, &QComboBox::currentIndexChanged, this, enableFields);
    connect(m_data, &QLineEdit::textChanged, this, enableFields);
    enableFields();
    connect(m_buttons, &QDialogButtonBox::accepted, this, [this] { start(); });
    connect(m_buttons, &QDialogButtonBox::rejected, this, &ImportModelDialog::reject);
    m_runner = new TrainRunner(this);
    connect(m_runner, &TrainRunner::progress, this, [this](const ProgressEvent& e) {
        m_progress->setRange(0, int(e.totalSteps));
        m_progress->setValue(int(e.step));
    });
    connect(m_runner, &TrainRunner::logLine, this, [this](const QString& line) {
        m_summary->setText(line);
        if (line == QString::fromStdString(PhaseForwarder::phaseLine("evaluate-reference"))) {
            m_summary->setText(tr("Measuring the imported model with the sampler…"));
            m_progress->setRange(0, 0); // busy: the sampler reports no steps
        }
    });
    connect(m_runner, &TrainRunner::finished, this, [this](const FinishedEvent& done) {
        m_progress->setVisible(false);
        for (QAbstractButton* b : m_buttons->buttons())
            b->setEnabled(true);
        if (std::exchange(m_stopping, false) && done.status != RunStatus::Completed) {
            QDialog::reject();
            return;
        }
        if (done.status == RunStatus::Failed) {
            showError(QString::fromStdString(done.error));
            return;
        }
        Q_EMIT modelImported(m_created);
        accept();
    });
}

ImportModelDialog::~ImportModelDialog()
{
    delete m_runner; // stops its job and waits for it, before the widgets it reports to go
}

bool ImportModelDialog::busy() const { return m_runner->running(); }

void ImportModelDialog::setTorchScriptFile(const QString& path) { m_torchScript->setText(path); }
void ImportModelDialog::setVocabularyFile(const QString& path) { m_vocabulary->setText(path); }
void ImportModelDialog::setDataFile(const QString& path) { m_data->setText(path); }
void ImportModelDialog::setTask(const QString& task) { m_task->setCurrentIndex(m_task->findData(task)); }

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
    if (m_torchScript->text().trimmed().isEmpty() || m_vocabulary->text().trimmed().isEmpty()) {
        showError(tr("Choose the TorchScript model and its vocabulary file."));
        return false;
    }
    const QString base = QFileInfo(m_torchScript->text()).completeBaseName();
    m_created = newModelFile(m_modelFolder, base);
    ImportJobSpec job;
    job.torchScriptPath = m_torchScript->text().trimmed().toStdString();
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
    job.evaluationSamples = 1000;
    job.outputPath = m_created.toStdString();
    job.storePath = m_storePath.toStdString();
    job.modelName = base.toStdString() + " (imported)";
    m_error.clear();
    m_stopping = false;
    m_progress->setRange(0, 4);
    m_progress->setValue(0);
    m_progress->setVisible(true);
    for (QAbstractButton* b : m_buttons->buttons())
        if (m_buttons->buttonRole(b) == QDialogButtonBox::AcceptRole)
            b->setEnabled(false);
    m_summary->setText(tr("Importing %1…").arg(QFileInfo(m_torchScript->text()).fileName()));
    return m_runner->start(
        [job](TrainListener& listener, const StopToken& stop) { return importAsTrainJob(job, listener, stop); });
}

void ImportModelDialog::reject()
{
    if (busy()) {
        m_stopping = true;
        m_runner->requestStop(); // the import ends after its current step; the dialog closes then
        m_summary->setText(tr("Stopping…"));
        return;
    }
    QDialog::reject();
}

} // namespace d2dpo::ui
