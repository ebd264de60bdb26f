// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/models/exportdialog.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

#include "base/safeoutput.h"
#include "ui/models/modelactions.h"

namespace d2dpo::ui {

namespace {

const QString kFolderKey = QStringLiteral("export/folder");
const QString kSamplesKey = QStringLiteral("export/samples");
const QString kSecondsKey = QStringLiteral("export/sampleSeconds");

} // namespace

ExportDialog::ExportDialog(const ModelRecord& model, QWidget* parent)
    : QDialog(parent)
    , m_model(model)
{
    setWindowTitle(tr("Export %1").arg(QString::fromStdString(model.name)));
    QSettings settings;
    const QString where = settings.value(kFolderKey, QDir::homePath()).toString();

    m_folder = new QLineEdit(QDir(QDir(where).exists() ? where : QDir::homePath()).filePath(suggestedExportName(model)), this);
    m_folder->setObjectName(QStringLiteral("exportFolder"));
    m_folder->setMinimumWidth(360);
    auto* choose = new QPushButton(tr("Choose…"), this);
    auto* folderRow = new QHBoxLayout;
    folderRow->addWidget(m_folder, 1);
    folderRow->addWidget(choose);

    const ExportSamples defaults;
    m_samples = new QSpinBox(this);
    m_samples->setObjectName(QStringLiteral("exportSamples"));
    m_samples->setRange(0, 100000);
    m_samples->setSpecialValueText(tr("None: the model's files only"));
    m_samples->setValue(settings.value(kSamplesKey, int(defaults.most)).toInt());
    m_seconds = new QSpinBox(this);
    m_seconds->setObjectName(QStringLiteral("exportSeconds"));
    m_seconds->setRange(0, 24 * 3600);
    m_seconds->setSuffix(tr(" s"));
    m_seconds->setSpecialValueText(tr("No limit: all of them, as set"));
    m_seconds->setValue(settings.value(kSecondsKey, int(defaults.seconds)).toInt());
    m_plan = new QLabel(this);
    m_plan->setObjectName(QStringLiteral("exportPlan"));
    m_plan->setWordWrap(true);
    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("exportError"));
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("color: #b00020;"));
    m_error->hide();

    auto* form = new QFormLayout;
    form->addRow(tr("Folder:"), folderRow);
    form->addRow(QString(), m_error);
    form->addRow(tr("Samples, at most:"), m_samples);
    form->addRow(tr("Time for the samples:"), m_seconds);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Export"));
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_plan);
    layout->addWidget(buttons);

    connect(choose, &QPushButton::clicked, this, &ExportDialog::chooseFolder);
    connect(m_folder, &QLineEdit::textEdited, m_error, &QWidget::hide);
    connect(m_samples, &QSpinBox::valueChanged, this, &ExportDialog::explainSamples);
    connect(m_seconds, &QSpinBox::valueChanged, this, &ExportDialog::explainSamples);
    connect(buttons, &QDialogButtonBox::accepted, this, &ExportDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &ExportDialog::reject);
    explainSamples();
}

QString ExportDialog::folder() const { return m_folder->text().trimmed(); }

ExportSamples ExportDialog::samples() const { return {m_samples->value(), double(m_seconds->value())}; }

void ExportDialog::explainSamples()
{
    const QString files = tr("The model's files are written first, in seconds.");
    if (m_samples->value() == 0)
        m_plan->setText(files + QLatin1Char(' ') + tr("No samples are drawn."));
    else if (m_seconds->value() == 0)
        m_plan->setText(files + QLatin1Char(' ') +
                        tr("Then all %n samples with the exact sampler, however long that takes (minutes for a "
                           "large model). Cancel skips them and keeps the files.",
                           nullptr, m_samples->value()));
    else
        m_plan->setText(files + QLatin1Char(' ') +
                        tr("Then as many of %n samples as fit in about %1 s at the model's measured speed, with the "
                           "fast (confident) sampler where the exact one would not fit; the wait is said before "
                           "the draw starts. Cancel skips them and keeps the files.",
                           nullptr, m_samples->value())
                            .arg(m_seconds->value()));
}

void ExportDialog::chooseFolder()
{
    const QString chosen = QFileDialog::getSaveFileName(this, tr("Export the model into a new folder"), folder(),
                                                        QString(), nullptr, QFileDialog::DontConfirmOverwrite);
    if (!chosen.isEmpty()) {
        m_folder->setText(chosen);
        m_error->hide();
    }
}

void ExportDialog::accept()
{
    if (folder().isEmpty()) {
        m_error->setText(tr("Name the folder to export into."));
        m_error->show();
        return;
    }
    if (QDir::isRelativePath(folder())) { // relative to what? the desktop's working folder is nobody's choice
        m_error->setText(tr("Give the folder's whole path, or choose it."));
        m_error->show();
        return;
    }
    if (Status s = checkOutputFolder(folder().toStdString(), {m_model.path}, "the export folder"); !s) {
        m_error->setText(QString::fromStdString(s.error()));
        m_error->show();
        return;
    }
    QSettings().setValue(kFolderKey, QFileInfo(folder()).absolutePath());
    QDialog::accept();
}

void ExportDialog::done(int result)
{
    QSettings settings;
    settings.setValue(kSamplesKey, m_samples->value());
    settings.setValue(kSecondsKey, m_seconds->value());
    QDialog::done(result);
}

} // namespace d2dpo::ui
