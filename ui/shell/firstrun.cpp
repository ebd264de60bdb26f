// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/shell/firstrun.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include "jobs/runfolder.h"

namespace d2dpo::ui {

QString installShippedReference(const QString& storePath, QString& error)
{
    const QString folder = QString::fromStdString(storeFolder(storePath.toStdString())) + QStringLiteral("/models");
    const QString target = folder + QStringLiteral("/reference-n10.d2dpo");
    if (QFileInfo::exists(target))
        return target;
    if (!QDir().mkpath(folder)) {
        error = QStringLiteral("cannot create %1").arg(folder);
        return {};
    }
    QFile shipped(QStringLiteral(":/models/reference-n10.d2dpo"));
    if (!shipped.copy(target)) {
        error = QStringLiteral("cannot copy the shipped reference model to %1: %2").arg(target, shipped.errorString());
        return {};
    }
    QFile::setPermissions(target, QFile::ReadOwner | QFile::WriteOwner | QFile::ReadGroup | QFile::ReadOther);
    return target;
}

} // namespace d2dpo::ui
