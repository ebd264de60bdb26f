// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/models/newmodel/modelrecognition.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

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

QString vocabularyBeside(const QString& modelPath)
{
    const QFileInfo model(modelPath);
    if (modelPath.isEmpty() || !model.isFile())
        return {};
    const QDir folder = model.absoluteDir();
    const QString stem = model.completeBaseName();
    for (const QString& name : {stem + QStringLiteral(".vocab.json"), stem + QStringLiteral(".vocabulary.json"),
                                QStringLiteral("vocabulary.json"), QStringLiteral("vocab.json")})
        if (QFileInfo(folder.filePath(name)).isFile())
            return folder.filePath(name);
    return {};
}

} // namespace d2dpo::ui
