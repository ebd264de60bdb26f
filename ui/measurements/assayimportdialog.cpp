// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/measurements/assayimportdialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPushButton>

namespace d2dpo::ui {

AssayImportDialog::AssayImportDialog(const std::vector<ModelRecord>& models, std::string storePath, QWidget* parent)
    : QDialog(parent)
    , m_storePath(std::move(storePath))
{
    setWindowTitle(tr("Import measurements"));
    auto* form = new QFormLayout(this);
    auto* fileRow = new QHBoxLayout;
    m_file = new QLineEdit(this);
    m_file->setObjectName(QStringLiteral("file"));
    m_file->setPlaceholderText(tr("CSV/TSV with a header, a ProteinGym DMS file, or FASTA with values"));
    fileRow->addWidget(m_file, 1);
    auto* browse = new QPushButton(tr("Browse…"), this);
    fileRow->addWidget(browse);
    form->addRow(tr("&File:"), fileRow);
    m_assay = new QLineEdit(this);
    m_assay->setObjectName(QStringLiteral("assay"));
    m_assay->setToolTip(tr("Values of different assays are never compared; an assay imported again gains the "
                           "new file's values"));
    form->addRow(tr("&Assay:"), m_assay);
    m_direction = new QComboBox(this);
    m_direction->addItem(tr("A higher value is better"), QStringLiteral("higher"));
    m_direction->addItem(tr("A lower value is better"), QStringLiteral("lower"));
    form->addRow(tr("&Better:"), m_direction);
    m_model = new QComboBox(this);
    m_model->setObjectName(QStringLiteral("model"));
    for (const ModelRecord& m : models)
        m_model->addItem(QStringLiteral("%1 · %2").arg(QString::fromStdString(m.name), QString::fromStdString(m.taskKey)),
                         QString::fromStdString(m.path));
    m_model->setToolTip(tr("Each sequence is checked against this model's task: its symbols and its lengths"));
    form->addRow(tr("&Model:"), m_model);
    m_format = new QComboBox(this);
    m_format->setObjectName(QStringLiteral("format"));
    m_format->addItem(tr("Found from the file"), QStringLiteral("auto"));
    m_format->addItem(tr("Table (CSV or TSV with a header)"), QStringLiteral("table"));
    m_format->addItem(tr("ProteinGym DMS (mutant, mutated_sequence, DMS_score)"), QStringLiteral("proteingym"));
    m_format->addItem(tr("FASTA with value=… in the headers"), QStringLiteral("fasta"));
    form->addRow(tr("&Layout:"), m_format);
    m_sequenceColumn = new QLineEdit(QStringLiteral("sequence"), this);
    m_valueColumn = new QLineEdit(QStringLiteral("value"), this);
    m_sdColumn = new QLineEdit(this);
    m_sdColumn->setPlaceholderText(tr("none"));
    form->addRow(tr("Sequence column:"), m_sequenceColumn);
    form->addRow(tr("Value column:"), m_valueColumn);
    form->addRow(tr("Standard deviation column:"), m_sdColumn);
    m_wildType = new QLineEdit(this);
    m_wildType->setObjectName(QStringLiteral("wildType"));
    m_wildType->setPlaceholderText(tr("optional: the mutants are then checked against it"));
    form->addRow(tr("&Wild type:"), m_wildType);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_buttons->button(QDialogButtonBox::Ok)->setText(tr("Import"));
    form->addRow(m_buttons);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Measurements file"), m_file->text(),
                                                          tr("Assay values (*.csv *.tsv *.txt *.fasta *.fa);;All files (*)"));
        if (!path.isEmpty())
            setFile(path);
    });
    for (QLineEdit* e : {m_file, m_assay})
        connect(e, &QLineEdit::textChanged, this, &AssayImportDialog::updateFields);
    connect(m_format, &QComboBox::currentIndexChanged, this, &AssayImportDialog::updateFields);
    updateFields();
    resize(640, sizeHint().height());
}

void AssayImportDialog::setFile(const QString& path)
{
    m_file->setText(path);
    if (m_assay->text().isEmpty())
        m_assay->setText(QFileInfo(path).completeBaseName());
}

void AssayImportDialog::updateFields()
{
    const QString format = m_format->currentData().toString();
    const bool table = format == u"auto" || format == u"table";
    for (QLineEdit* e : {m_sequenceColumn, m_valueColumn, m_sdColumn})
        e->setEnabled(table);
    m_wildType->setEnabled(format == u"auto" || format == u"proteingym");
    m_buttons->button(QDialogButtonBox::Ok)
        ->setEnabled(!m_file->text().trimmed().isEmpty() && !m_assay->text().trimmed().isEmpty() && m_model->count() > 0);
}

AssayImportSpec AssayImportDialog::spec() const
{
    AssayImportSpec spec;
    spec.storePath = m_storePath;
    spec.file = m_file->text().trimmed().toStdString();
    spec.checkpoint = m_model->currentData().toString().toStdString();
    spec.direction = m_direction->currentData().toString().toStdString();
    spec.read.assay = m_assay->text().trimmed().toStdString();
    spec.read.format = assayFileFormatNamed(m_format->currentData().toString().toStdString()).value();
    spec.read.sequenceColumn = m_sequenceColumn->text().trimmed().toStdString();
    spec.read.valueColumn = m_valueColumn->text().trimmed().toStdString();
    spec.read.sdColumn = m_sdColumn->text().trimmed().toStdString();
    spec.read.wildType = m_wildType->text().trimmed().toStdString();
    return spec;
}

} // namespace d2dpo::ui
