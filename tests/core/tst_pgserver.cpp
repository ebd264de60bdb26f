// SPDX-License-Identifier: GPL-3.0-or-later
// The private PostgreSQL server the team engine's suites run against (support/pgserver.h): it
// starts, hands out fresh databases, authenticates roles by password and nothing else, and is
// reachable through its Unix socket only. Skipped where PostgreSQL is not installed.
#include <QtTest/QtTest>

#include <libpq-fe.h>

#include <memory>
#include <string>

#include "support/pgserver.h"

using d2dpo::test::PostgresServer;

namespace {

using Connection = std::unique_ptr<PGconn, decltype(&PQfinish)>;

Connection openConnection(const std::string& url)
{
    return Connection(PQconnectdb(url.c_str()), &PQfinish);
}

/// The first column of the first row of `sql`'s result; empty (and a failed check) on error.
QString scalar(PGconn* connection, const char* sql)
{
    PGresult* result = PQexec(connection, sql);
    QString value;
    if (PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) > 0)
        value = QString::fromUtf8(PQgetvalue(result, 0, 0));
    else
        qWarning("%s: %s", sql, PQresultErrorMessage(result));
    PQclear(result);
    return value;
}

} // namespace

class TestPgServer final : public QObject {
    Q_OBJECT

    PostgresServer* m_server = nullptr;

private Q_SLOTS:
    void initTestCase()
    {
        QElapsedTimer timer;
        timer.start();
        m_server = PostgresServer::shared();
        if (!m_server)
            QSKIP(PostgresServer::unavailableReason().c_str());
        qInfo("PostgreSQL started in %lld ms, socket %s port %d", timer.elapsed(), m_server->socketDir().c_str(),
              m_server->port());
        QVERIFY(PostgresServer::unavailableReason().empty());
        QCOMPARE(PostgresServer::shared(), m_server); // one server per process
    }

    void superuserUrlConnects()
    {
        auto connection = openConnection(m_server->superuserUrl());
        QVERIFY2(PQstatus(connection.get()) == CONNECTION_OK, PQerrorMessage(connection.get()));
        QCOMPARE(scalar(connection.get(), "SELECT current_user"), QStringLiteral("postgres"));
        QCOMPARE(scalar(connection.get(), "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"),
                 QStringLiteral("t"));
        QVERIFY(scalar(connection.get(), "SHOW server_version").startsWith(QLatin1String("15")));
        QCOMPARE(scalar(connection.get(), "SHOW server_encoding"), QStringLiteral("UTF8"));
    }

    void listensOnNoTcpPort()
    {
        auto connection = openConnection(m_server->superuserUrl());
        QVERIFY2(PQstatus(connection.get()) == CONNECTION_OK, PQerrorMessage(connection.get()));
        QCOMPARE(scalar(connection.get(), "SHOW listen_addresses"), QString());
        // And a TCP connection to its port is refused outright.
        auto tcp = openConnection("postgresql://postgres@127.0.0.1:" + std::to_string(m_server->port())
                           + "/postgres?connect_timeout=5");
        QCOMPARE(PQstatus(tcp.get()), CONNECTION_BAD);
    }

    void createDatabaseGivesFreshDistinctDatabases()
    {
        std::string error;
        const std::string first = m_server->createDatabase("pgserver", {}, &error);
        QVERIFY2(!first.empty(), error.c_str());
        const std::string second = m_server->createDatabase("pgserver", {}, &error);
        QVERIFY2(!second.empty(), error.c_str());
        QVERIFY(first != second);
        QVERIFY(QString::fromStdString(first).startsWith(QLatin1String("pgserver_")));
        QVERIFY2(m_server->exec(first, "CREATE TABLE t (x int); INSERT INTO t VALUES (1)", &error), error.c_str());
        // The second is empty: the first's table is not there.
        auto connection = openConnection(m_server->superuserUrl(second));
        QVERIFY2(PQstatus(connection.get()) == CONNECTION_OK, PQerrorMessage(connection.get()));
        QCOMPARE(scalar(connection.get(), "SELECT current_database()"), QString::fromStdString(second));
        QCOMPARE(scalar(connection.get(), "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"),
                 QStringLiteral("0"));
    }

    void execReportsErrors()
    {
        std::string error;
        QVERIFY(!m_server->exec("postgres", "SELECT * FROM no_such_table", &error));
        QVERIFY2(error.find("no_such_table") != std::string::npos, error.c_str());
        QVERIFY(!m_server->exec("no_such_database", "SELECT 1", &error));
        QVERIFY2(error.find("no_such_database") != std::string::npos, error.c_str());
    }

    void loginRoleConnectsWithItsPassword()
    {
        // Characters a URI must encode: the password reaches the server as written.
        const std::string password = "p@ss w/rd:?&%'\"";
        std::string error;
        QVERIFY2(m_server->createLoginRole("alice", password, &error), error.c_str());
        const std::string database = m_server->createDatabase("alice", "alice", &error);
        QVERIFY2(!database.empty(), error.c_str());
        auto connection = openConnection(m_server->url("alice", password, database));
        QVERIFY2(PQstatus(connection.get()) == CONNECTION_OK, PQerrorMessage(connection.get()));
        QCOMPARE(scalar(connection.get(), "SELECT current_user"), QStringLiteral("alice"));
        QCOMPARE(scalar(connection.get(), "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"),
                 QStringLiteral("f"));
        // The owner of the database owns its public schema: the role can create its tables.
        PGresult* result = PQexec(connection.get(), "CREATE TABLE mine (x int)");
        QCOMPARE(PQresultStatus(result), PGRES_COMMAND_OK);
        PQclear(result);
    }

    void createLoginRoleAgainSetsTheNewPassword()
    {
        std::string error;
        QVERIFY2(m_server->createLoginRole("bob", "first", &error), error.c_str());
        QVERIFY2(m_server->createLoginRole("bob", "second", &error), error.c_str());
        QCOMPARE(PQstatus(openConnection(m_server->url("bob", "first", "postgres")).get()), CONNECTION_BAD);
        auto connection = openConnection(m_server->url("bob", "second", "postgres"));
        QVERIFY2(PQstatus(connection.get()) == CONNECTION_OK, PQerrorMessage(connection.get()));
        QCOMPARE(scalar(connection.get(), "SELECT current_user"), QStringLiteral("bob"));
    }

    void wrongPasswordIsRefused()
    {
        std::string error;
        QVERIFY2(m_server->createLoginRole("carol", "right", &error), error.c_str());
        auto connection = openConnection(m_server->url("carol", "wrong", "postgres"));
        QCOMPARE(PQstatus(connection.get()), CONNECTION_BAD);
        QVERIFY2(std::string(PQerrorMessage(connection.get())).find("password authentication failed")
                     != std::string::npos,
                 PQerrorMessage(connection.get()));
        // No password at all is refused too: the socket is not trusted.
        auto none = openConnection("postgresql://carol@/postgres?host=" + m_server->socketDir()
                            + "&port=" + std::to_string(m_server->port()) + "&passfile=/nonexistent");
        QCOMPARE(PQstatus(none.get()), CONNECTION_BAD);
        // Nor is the superuser's password anyone else's.
        QCOMPARE(PQstatus(openConnection(m_server->url("postgres", "wrong", "postgres")).get()), CONNECTION_BAD);
    }
};

QTEST_GUILESS_MAIN(TestPgServer)
#include "tst_pgserver.moc"
