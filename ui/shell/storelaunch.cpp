// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/shell/storelaunch.h"

#include <QCoreApplication>
#include <QProcess>
#include <QProcessEnvironment>

#include "store/storename.h"

namespace d2dpo::ui {

StoreLaunch storeLaunch(const QString& store)
{
    const std::string given = store.toStdString();
    return {{QStringLiteral("--db"), QString::fromStdString(storeNameForMessages(given))},
            QString::fromStdString(storePassword(given))};
}

bool startStoreWindow(const StoreLaunch& launch)
{
    QProcess process;
    process.setProgram(QCoreApplication::applicationFilePath());
    process.setArguments(launch.arguments);
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.remove(QString::fromLatin1(kStorePasswordVariable)); // never one handed to this window
    if (!launch.password.isEmpty())
        environment.insert(QString::fromLatin1(kStorePasswordVariable), launch.password);
    process.setProcessEnvironment(environment);
    return process.startDetached();
}

QString storeWithHandedPassword(const QString& store)
{
    const QByteArray password = qgetenv(kStorePasswordVariable);
    qunsetenv(kStorePasswordVariable);
    if (password.isEmpty() || storePassword(store.toStdString()) != "")
        return store;
    return QString::fromStdString(storeUrlWithPassword(store.toStdString(), password.toStdString()));
}

} // namespace d2dpo::ui
