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
            QString::fromStdString(storePassword(given)), QString::fromStdString(storeSslPassword(given))};
}

bool startStoreWindow(const StoreLaunch& launch)
{
    QProcess process;
    process.setProgram(QCoreApplication::applicationFilePath());
    process.setArguments(launch.arguments);
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.remove(QString::fromLatin1(kStorePasswordVariable)); // never one handed to this window
    environment.remove(QString::fromLatin1(kStoreSslPasswordVariable));
    if (!launch.password.isEmpty())
        environment.insert(QString::fromLatin1(kStorePasswordVariable), launch.password);
    if (!launch.sslPassword.isEmpty())
        environment.insert(QString::fromLatin1(kStoreSslPasswordVariable), launch.sslPassword);
    process.setProcessEnvironment(environment);
    return process.startDetached();
}

QString storeWithHandedPassword(const QString& store)
{
    const QByteArray password = qgetenv(kStorePasswordVariable), sslPassword = qgetenv(kStoreSslPasswordVariable);
    qunsetenv(kStorePasswordVariable);
    qunsetenv(kStoreSslPasswordVariable);
    std::string url = store.toStdString();
    if (!password.isEmpty() && storePassword(url).empty())
        url = storeUrlWithPassword(url, password.toStdString());
    if (!sslPassword.isEmpty() && storeSslPassword(url).empty())
        url = storeUrlWithSslPassword(url, sslPassword.toStdString());
    return QString::fromStdString(url);
}

} // namespace d2dpo::ui
