// SPDX-License-Identifier: GPL-3.0-or-later
// Where a model made in the desktop application goes (from a data file, or imported): a new file
// in the store's model folder, named after its source and the time, never one that exists, so
// two models made within the same second do not collide.
#pragma once

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QString>

namespace d2dpo::ui {

/// "<folder>/<base>-<yyyyMMdd-HHmmss>.d2dpo", or with "-2", "-3"... before the extension when
/// that file exists. Creates the folder.
inline QString newModelFile(const QString& folder, const QString& base)
{
    QDir().mkpath(folder);
    const QString stem = QDir(folder).filePath(
        base + QLatin1Char('-') + QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-HHmmss")));
    QString path = stem + QStringLiteral(".d2dpo");
    for (int n = 2; QFileInfo::exists(path); ++n)
        path = stem + QLatin1Char('-') + QString::number(n) + QStringLiteral(".d2dpo");
    return path;
}

} // namespace d2dpo::ui
