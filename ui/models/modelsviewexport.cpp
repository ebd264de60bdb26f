// SPDX-License-Identifier: GPL-3.0-or-later
// ModelsView: exporting the selected model (in the background, with its progress window).
#include "ui/models/modelsview.h"

#include <QPushButton>

#include "ui/models/exportprogress.h"
#include "ui/models/modelactions.h"
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
    const QString folder = exportFolderWithDialog(this, *model);
    if (folder.isEmpty())
        return;
    m_export->setEnabled(false);
    Q_EMIT statusMessage(tr("Exporting to %1…").arg(folder));
    m_exporter->start(*model, folder);
    showExportProgress(m_exporter, this, QString::fromStdString(model->name), folder);
}

} // namespace d2dpo::ui
