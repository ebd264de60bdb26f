// SPDX-License-Identifier: GPL-3.0-or-later
// ModelsView: exporting the selected model (in the background, with its progress window).
#include "ui/models/modelsview.h"

#include <QPushButton>

#include "ui/models/exportdialog.h"
#include "ui/models/exportprogress.h"
#include "ui/models/modelexporter.h"

namespace d2dpo::ui {

Status ModelsView::exportSelected(const QString& folder)
{
    const auto model = selected();
    if (!model)
        return makeError("no model is selected");
    return m_exporter->exportModel(*model, folder);
}

void ModelsView::exportWithDialog()
{
    const auto model = selected();
    if (!model || m_exporter->running())
        return;
    ExportDialog dialog(*model, this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    const QString folder = dialog.folder();
    m_export->setEnabled(false);
    Q_EMIT statusMessage(tr("Exporting to %1…").arg(folder));
    m_exporter->start(*model, folder, dialog.samples());
    showExportProgress(m_exporter, this, QString::fromStdString(model->name), folder);
}

} // namespace d2dpo::ui
