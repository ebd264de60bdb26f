// SPDX-License-Identifier: GPL-3.0-or-later
// No labeler can hold a maintainer up, against a real PostgreSQL server: a labeler's transaction
// left open on the pairs it claimed delays a maintainer's statement by the server's timeout at
// most, with the server's own message, and leaves no server process waiting behind a client that
// gave up; an undo cannot take a labeler past the lease cap; an old store's upgrade waits 10 s at
// most for a session that holds its tables.
#include <QElapsedTimer>
#include <QtTest/QtTest>

#include <cstdlib>
#include <string>
#include <vector>

#include "support/teamstorefixture.h"

using namespace d2dpo;
using namespace d2dpo::test;

namespace {

/// A labeler's psql: one connection kept open, with whatever transaction it leaves open.
class HeldSession {
public:
    explicit HeldSession(const std::string& url) : m_connection(PQconnectdb(url.c_str())) {}
    ~HeldSession() { PQfinish(m_connection); }
    HeldSession(const HeldSession&) = delete;
    HeldSession& operator=(const HeldSession&) = delete;

    /// The first column of every row `sql` returns; the server's message in *error on failure.
    std::vector<std::string> run(const std::string& sql, std::string* error = nullptr)
    {
        std::vector<std::string> values;
        PGresult* result = PQexec(m_connection, sql.c_str());
        const ExecStatusType status = PQresultStatus(result);
        if (status == PGRES_TUPLES_OK) {
            for (int row = 0; row < PQntuples(result); ++row)
                values.push_back(PQgetvalue(result, row, 0));
        } else if (status != PGRES_COMMAND_OK && error) {
            *error = PQerrorMessage(m_connection);
        }
        PQclear(result);
        return values;
    }

private:
    PGconn* m_connection;
};

} // namespace

class TestTeamWaits final : public TeamStoreFixture {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        // Read when a connection opens: the server ends lock waits 3 s, statements 2 s, before this
        // client's limit.
        qputenv("D2DPO_STORE_ANSWER_SECONDS", "6");
        startTeam();
    }

    void anOpenTransactionDelaysAMaintainerByTheTimeoutOnly()
    {
        const std::string db = teamStore(6, 1);
        QVERIFY(!db.empty());
        HeldSession ben(as("ben", db));
        ben.run("BEGIN");
        const std::vector<std::string> held = ben.run("SELECT d2dpo_claim_pairs(16, '')");
        QCOMPARE(held.size(), size_t(6)); // ...and the pairs' rows stay locked while he idles
        auto max = openOrFail(as("max", db));
        QVERIFY(max);
        QElapsedTimer timer;
        timer.start();
        const auto label = max->addLabel(std::stoll(held.front()), Choice::Left, "max", 10);
        const qint64 waited = timer.elapsed();
        QVERIFY(!label);
        qInfo("a maintainer's label behind an open transaction: %lld ms, %s", waited, label.error().c_str());
        QVERIFY2(waited >= 2500 && waited < 5900, qPrintable(QString::number(waited))); // the server's 3 s
        QVERIFY2(label.error().find("lock timeout") != std::string::npos, label.error().c_str());
        // Nothing of max's waits on in the server, and his next statements go through.
        QCOMPARE(firstValue(m_server->superuserUrl(db), "SELECT count(*) FROM pg_stat_activity "
                                                        "WHERE usename = 'max' AND wait_event_type = 'Lock'"),
                 std::string("0"));
        QVERIFY(max->queueSettings());
        ben.run("ROLLBACK");
        QVERIFY(max->addLabel(std::stoll(held.front()), Choice::Left, "max", 10));
    }

    void anUndoStaysUnderTheLeaseCap()
    {
        const std::string db = teamStore(60, 1);
        QVERIFY(!db.empty());
        HeldSession ben(as("ben", db));
        QCOMPARE(ben.run("SELECT d2dpo_claim_pairs(16, '')").size(), size_t(16));
        const std::string leased = "SELECT count(*) FROM leases WHERE labeler = 'ben' "
                                   "AND expires_at > CAST(extract(epoch FROM now()) AS BIGINT)";
        // Claim, skip, undo, again and again: each undo used to add a lease past the cap.
        for (int round = 0; round < 8; ++round) {
            const std::vector<std::string> claimed = ben.run("SELECT d2dpo_claim_pairs(16, '')");
            QVERIFY(!claimed.empty());
            std::string error;
            ben.run("SELECT d2dpo_add_label(" + claimed.back() + ", 'skip', 10)", &error);
            QVERIFY2(error.empty(), error.c_str());
            ben.run("SELECT d2dpo_claim_pairs(16, '')");
            ben.run("SELECT d2dpo_undo_label(NULL)", &error);
            QVERIFY2(error.empty(), error.c_str());
            QVERIFY2(std::stoi(ben.run(leased).front()) <= 16, ben.run(leased).front().c_str());
        }
    }

    void anUpgradeWaitsTenSecondsAtMost()
    {
        const std::string db = teamStore(2, 1);
        QVERIFY(!db.empty());
        // The store as the build before measurements left it: schema 11, without their tables.
        std::string error;
        QVERIFY2(m_server->exec(db, "DROP TABLE measurements, assay_imports, assays; UPDATE store_meta SET value = "
                                    "'11' WHERE key = 'schema_version'",
                                &error),
                 error.c_str());
        // A session that read the labels and never ended its transaction, as a labeler's psql may.
        HeldSession reader(m_server->superuserUrl(db));
        reader.run("BEGIN");
        reader.run("SELECT count(*) FROM labels");
        QElapsedTimer timer;
        timer.start();
        qputenv("D2DPO_STORE_ANSWER_SECONDS", "30");
        const auto upgraded = PreferenceStore::open(m_server->superuserUrl(db));
        qputenv("D2DPO_STORE_ANSWER_SECONDS", "6");
        const qint64 waited = timer.elapsed();
        QVERIFY(!upgraded);
        qInfo("an upgrade behind an open transaction: %lld ms, %s", waited, upgraded.error().c_str());
        QVERIFY2(waited >= 9000 && waited < 15000, qPrintable(QString::number(waited)));
        QVERIFY2(upgraded.error().find("waited 10 s") != std::string::npos, upgraded.error().c_str());
        // Nothing was changed, and once the reader is gone the upgrade goes through.
        QCOMPARE(firstValue(m_server->superuserUrl(db), "SELECT value FROM store_meta WHERE key = 'schema_version'"),
                 std::string("11"));
        reader.run("ROLLBACK");
        QVERIFY(openOrFail(m_server->superuserUrl(db)));
    }
};

QTEST_GUILESS_MAIN(TestTeamWaits)
#include "tst_teamwaits.moc"
