// SPDX-License-Identifier: GPL-3.0-or-later
// File ▸ Import measurements: the file of assay values, the assay's name and which way is better,
// the model whose task the sequences are of, and the file's layout (auto, a table with its columns
// named, ProteinGym's DMS layout with its wild type, or FASTA with values in the headers). The
// choices `d2dpo measurements import` takes; the import itself runs in the Measurements view.
#pragma once

#include <QDialog>

#include <vector>

#include "jobs/assayimport.h"
#include "store/records.h"

class QComboBox;
class QDialogButtonBox;
class QLineEdit;

namespace d2dpo::ui {

class AssayImportDialog final : public QDialog {
    Q_OBJECT

public:
    /// `models`: the store's models to choose the task by (the newest first); `storePath`: where it goes.
    AssayImportDialog(const std::vector<ModelRecord>& models, std::string storePath, QWidget* parent = nullptr);

    /// Fills the file's field (and the assay's name from it, when empty).
    void setFile(const QString& path);
    /// The import as chosen.
    AssayImportSpec spec() const;

private:
    void updateFields();

    std::string m_storePath;
    QLineEdit* m_file = nullptr;
    QLineEdit* m_assay = nullptr;
    QComboBox* m_model = nullptr;
    QComboBox* m_direction = nullptr;
    QComboBox* m_format = nullptr;
    QLineEdit* m_sequenceColumn = nullptr;
    QLineEdit* m_valueColumn = nullptr;
    QLineEdit* m_sdColumn = nullptr;
    QLineEdit* m_wildType = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
};

} // namespace d2dpo::ui
