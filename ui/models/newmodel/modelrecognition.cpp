// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/models/newmodel/modelrecognition.h"

#include <QCoreApplication>

#include "jobs/importjob.h"

namespace d2dpo::ui {

bool isWeightsPath(const QString& path) { return !path.isEmpty() && isPublishedWeights(path.toStdString()); }

QString modelRecognition(const QString& path)
{
    if (!isWeightsPath(path))
        return {};
    const auto recognised = recognisePublishedWeights(path.toStdString());
    if (!recognised)
        return QStringLiteral("<span style='color:#b03a2e'>%1</span>")
            .arg(QString::fromStdString(recognised.error()).toHtmlEscaped());
    return QCoreApplication::translate("ImportModelDialog", "Recognised %1 (read as data)")
        .arg(QString::fromStdString(recognised.value()).toHtmlEscaped());
}

} // namespace d2dpo::ui
