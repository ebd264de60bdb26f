// SPDX-License-Identifier: GPL-3.0-or-later
// What the team store's suites share: a private PostgreSQL server (support/pgserver.h) with a
// store per case, the login roles ana and ben (labelers), max (maintainer) and labeler1..8, and
// SQL run as a role to see what the database refuses.
#pragma once

#include <QObject>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <cstdlib>
#include <string>

#include <libpq-fe.h>

#include "store/preferencestore.h"
#include "support/pgserver.h"
#include "support/storerecords.h"

namespace d2dpo::test {

const std::string kPassword = "team-secret";

/// Runs `sql` as whoever `url` names; the server's message when it is refused, else "" (and the
/// rows it returned or changed in *rows).
inline std::string refusal(const std::string& url, const std::string& sql, int64_t* rows = nullptr)
{
    PGconn* connection = PQconnectdb(url.c_str());
    std::string message;
    if (PQstatus(connection) != CONNECTION_OK) {
        message = PQerrorMessage(connection);
    } else {
        PGresult* result = PQexec(connection, sql.c_str());
        const ExecStatusType status = PQresultStatus(result);
        if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
            message = PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
        else if (rows)
            *rows = status == PGRES_TUPLES_OK ? PQntuples(result) : std::atoll(PQcmdTuples(result));
        PQclear(result);
    }
    PQfinish(connection);
    return message;
}

/// The first column of the first row `sql` returns when run as whoever `url` names; "<NULL>" for a
/// NULL, and "<refused: the server's message>" when it fails.
inline std::string firstValue(const std::string& url, const std::string& sql)
{
    PGconn* connection = PQconnectdb(url.c_str());
    std::string value;
    if (PQstatus(connection) != CONNECTION_OK) {
        value = std::string("<refused: ") + PQerrorMessage(connection) + ">";
    } else {
        PGresult* result = PQexec(connection, sql.c_str());
        if (PQresultStatus(result) != PGRES_TUPLES_OK) {
            const char* message = PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
            value = std::string("<refused: ") + (message ? message : "no rows") + ">";
        }
        else if (PQntuples(result) == 0 || PQgetisnull(result, 0, 0))
            value = "<NULL>";
        else
            value = PQgetvalue(result, 0, 0);
        PQclear(result);
    }
    PQfinish(connection);
    return value;
}

/// The base of a team store suite: call startTeam() from initTestCase.
class TeamStoreFixture : public QObject {
protected:
    PostgresServer* m_server = nullptr;
    QTemporaryDir m_dir;

    /// A new team store (made by the superuser, its owner) with `pairs` pairs; its database's name.
    std::string teamStore(int pairs, int overlap = 1, int leaseSeconds = 600)
    {
        const std::string database = m_server->createDatabase("team");
        auto store = openOrFail(m_server->superuserUrl(database));
        if (!store)
            return {};
        if (pairs > 0 && !store->addPairs(somePairs(pairs), "generated"))
            return {};
        QueueSettings settings;
        settings.overlap = overlap;
        settings.leaseSeconds = leaseSeconds;
        if (!store->setQueueSettings(settings))
            return {};
        return database;
    }
    std::string as(const std::string& role, const std::string& database) const
    {
        return m_server->url(role, kPassword, database);
    }
    void makeRole(const std::string& role, const char* group)
    {
        std::string error;
        QVERIFY2(m_server->createLoginRole(role, kPassword, &error), error.c_str());
        QVERIFY2(m_server->exec("postgres", "GRANT " + std::string(group) + " TO " + role, &error), error.c_str());
    }


    /// The server, a first store (it makes the group roles) and the login roles; skips without a server.
    void startTeam()
    {
        m_server = PostgresServer::shared();
        if (!m_server)
            QSKIP(("no PostgreSQL server: " + PostgresServer::unavailableReason()).c_str());
        QVERIFY(!teamStore(0).empty());
        for (const char* labeler : {"ana", "ben"})
            makeRole(labeler, "d2dpo_labeler");
        makeRole("max", "d2dpo_maintainer");
        for (int i = 1; i <= 8; ++i)
            makeRole("labeler" + std::to_string(i), "d2dpo_labeler");
    }
};

} // namespace d2dpo::test
