// SPDX-License-Identifier: GPL-3.0-or-later
// Opening another store starts a new window (the same program with --db). A password never goes
// on that command line, where any local user reads it in `ps`: the URL is passed without it and
// the password travels in the child's environment (readable only by the same user), which the
// new window reads once and removes before anything else can see or inherit it.
#pragma once

#include <QString>
#include <QStringList>

namespace d2dpo::ui {

/// The environment variables a window hands a store's password, and its SSL key's passphrase, over in.
inline constexpr const char* kStorePasswordVariable = "D2DPO_STORE_PASSWORD";
inline constexpr const char* kStoreSslPasswordVariable = "D2DPO_STORE_SSLPASSWORD";

/// How to start the window for `store`: its arguments (the store without a password) and the
/// password to hand over, if the store's URL carried one.
struct StoreLaunch {
    QStringList arguments;
    QString password;
    QString sslPassword; ///< the URL's sslpassword, handed over the same way
};
StoreLaunch storeLaunch(const QString& store);

/// Starts a detached window as `launch` says; false when it could not start.
bool startStoreWindow(const StoreLaunch& launch);

/// The store named on this window's command line, with the password (and SSL passphrase) a window
/// handed over put back into it (in memory only). The variables are removed from this process's
/// environment.
QString storeWithHandedPassword(const QString& store);

} // namespace d2dpo::ui
