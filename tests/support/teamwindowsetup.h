// SPDX-License-Identifier: GPL-3.0-or-later
// The set-up of a suite that opens windows on a team store: Qt's settings and the label outboxes
// kept out of the user's, the shared test server, and a login role in one of the store's groups.
#pragma once

#include <QByteArray>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <string>

#include "support/pgserver.h"

namespace d2dpo::test {

/// The shared server, null when none can start (the suite then QSKIPs with
/// PostgresServer::unavailableReason()); `data` becomes the data folder (the outboxes live there).
inline PostgresServer* teamWindowSetUp(const QTemporaryDir& data)
{
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    qputenv("XDG_DATA_HOME", data.path().toUtf8()); // never the home folder's outboxes
    return PostgresServer::shared();
}

/// A login role with `password` in `group` (d2dpo_labeler, d2dpo_maintainer); the groups exist
/// once a store was made on the server. False with the reason in `error`.
inline bool makeRoleIn(PostgresServer& server, const std::string& role, const std::string& password,
                       const std::string& group, std::string* error)
{
    return server.createLoginRole(role, password, error) &&
           server.exec("postgres", "GRANT " + group + " TO " + role, error);
}

} // namespace d2dpo::test
