// SPDX-License-Identifier: GPL-3.0-or-later
// What the Models view's Export… asks before it starts: a new (or empty) folder, named by the
// user, and the samples drawn after the model's files (how many at most, and the time they may
// take). It opens where the last export went with suggestedExportName(), and keeps the sample
// settings across Cancel and reopen.
#pragma once

#include <QDialog>

#include "store/preferencestore.h"
#include "ui/models/modelexporter.h"

class QLabel;
class QLineEdit;
class QSpinBox;

namespace d2dpo::ui {

class ExportDialog final : public QDialog {
    Q_OBJECT

public:
    ExportDialog(const ModelRecord& model, QWidget* parent = nullptr);

    QString folder() const;
    ExportSamples samples() const;

    /// Checks the folder (new or empty, never the model's own file) and says why not beside it.
    void accept() override;
    void done(int result) override; ///< the sample settings are kept, whatever the answer

private:
    void chooseFolder();
    void explainSamples();

    ModelRecord m_model;
    QLineEdit* m_folder = nullptr;
    QSpinBox* m_samples = nullptr;
    QSpinBox* m_seconds = nullptr;
    QLabel* m_plan = nullptr;
    QLabel* m_error = nullptr;
};

} // namespace d2dpo::ui
