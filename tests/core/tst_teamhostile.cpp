// SPDX-License-Identifier: GPL-3.0-or-later
// A hostile labeler with psql and its own password, against a real PostgreSQL server: every table
// read and written, SET ROLE to each group, labels with ids and times of its own choosing, leases
// that never end, gold answers and the models behind a blind comparison. Whatever it tries, it
// labels only as itself, through the store's functions, and sees only what a labeler may.
#include <QtTest/QtTest>

#include <map>
#include <string>
#include <vector>

#include "store/postgresschema.h"
#include "support/teamstorefixture.h"

using namespace d2dpo;
using namespace d2dpo::test;

namespace {

/// What a labeler may do to a table: read it (whole rows; its own only where it has rows), or
/// delete from it (nowhere, now: its leases go back through d2dpo_release_leases).
struct TableRights {
    bool select = false;
    bool remove = false;
    const char* column = nullptr; ///< a column the UPDATE attempt names
};

const std::map<std::string, TableRights>& tableRights()
{
    static const std::map<std::string, TableRights> rights = {
        {"store_meta", {true, false, "value"}},  {"models", {false, false, "name"}},
        {"runs", {false, false, "status"}},      {"run_metrics", {false, false, "value"}},
        {"tasks", {true, false, "spec_json"}},   {"sequences", {false, false, "tokens"}},
        {"imports", {false, false, "file"}},     {"comparisons", {false, false, "task"}},
        {"pairs", {false, false, "source"}},     {"labels", {true, false, "undone_at"}},
        {"evaluations", {false, false, "seed"}}, {"settings", {true, false, "value"}},
        {"leases", {true, false, "expires_at"}}, {"model_files", {false, false, "size"}},
        {"claim_turns", {false, false, "labeler"}},
    };
    return rights;
}

bool refused(const std::string& message) { return message.find("permission denied") != std::string::npos; }

} // namespace

class TestTeamHostile final : public TeamStoreFixture {
    Q_OBJECT

    /// A store of `pairs` pairs at `overlap` where ben labelled the first and holds the second.
    std::string storeWithBensWork(int pairs, int overlap)
    {
        const std::string db = teamStore(pairs, overlap);
        auto ben = openOrFail(as("ben", db));
        if (!ben)
            return {};
        const auto claimed = ben->claimPairs("ben", 2);
        if (!claimed || claimed->size() != 2 || !ben->addLabel(claimed->front().id, Choice::Left, "ben", 10))
            return {};
        return db;
    }

private Q_SLOTS:
    void initTestCase() { startTeam(); }

    void everyTableRefusesWhatALabelerMayNotDo_data()
    {
        QTest::addColumn<QString>("prefix");
        QTest::newRow("as herself") << QString();
        QTest::newRow("after SET ROLE d2dpo_labeler") << QStringLiteral("SET ROLE d2dpo_labeler; ");
    }
    void everyTableRefusesWhatALabelerMayNotDo()
    {
        QFETCH(QString, prefix);
        const std::string db = storeWithBensWork(4, 2);
        QVERIFY(!db.empty());
        const std::string ana = as("ana", db), before = prefix.toStdString();
        for (const auto& [table, rights] : tableRights()) {
            const std::string read = refusal(ana, before + "SELECT * FROM " + table);
            QVERIFY2(rights.select ? read.empty() : refused(read), (table + ": " + read).c_str());
            const std::string insert = refusal(ana, before + "INSERT INTO " + table + " DEFAULT VALUES");
            QVERIFY2(refused(insert), (table + " insert: " + insert).c_str());
            const std::string update =
                refusal(ana, before + "UPDATE " + table + " SET " + rights.column + " = " + rights.column);
            QVERIFY2(refused(update), (table + " update: " + update).c_str());
            int64_t rows = -1;
            const std::string remove = refusal(ana, before + "DELETE FROM " + table, &rows);
            QVERIFY2(rights.remove ? remove.empty() : refused(remove), (table + " delete: " + remove).c_str());
        }
        // What she could read or delete was hers alone: ben's label and lease stand.
        const std::string max = as("max", db);
        QCOMPARE(firstValue(max, "SELECT count(*) FROM labels WHERE labeler = 'ben'"), std::string("1"));
        QCOMPARE(firstValue(max, "SELECT count(*) FROM leases WHERE labeler = 'ben'"), std::string("1"));
        QCOMPARE(firstValue(ana, before + "SELECT count(*) FROM labels"), std::string("0"));
        // Nor may she become a maintainer, or the server's superuser.
        QVERIFY(refused(refusal(ana, "SET ROLE d2dpo_maintainer")));
        QVERIFY(refused(refusal(ana, "SET ROLE postgres")));
        QVERIFY(!refusal(ana, "SET SESSION AUTHORIZATION ben").empty());
    }

    void aGroupRoleIsNoOnesIdentity()
    {
        const std::string db = teamStore(3, 2);
        const std::string ana = as("ana", db);
        // As the group: no raw label or lease, and the store's functions still know her as ana.
        QVERIFY(refused(refusal(ana, "SET ROLE d2dpo_labeler; INSERT INTO labels (pair_id, choice, labeler, "
                                     "decide_ms, created_at) VALUES (1, 'left', 'd2dpo_labeler', 1, 'now')")));
        QVERIFY(refused(refusal(ana, "SET ROLE d2dpo_labeler; INSERT INTO leases VALUES (1, 'd2dpo_labeler', 9)")));
        QVERIFY(refusal(ana, "SET ROLE d2dpo_labeler; SELECT d2dpo_claim_pairs(3, ''); "
                             "SELECT d2dpo_add_label(1, 'left', 5)")
                    .empty());
        const std::string max = as("max", db);
        QCOMPARE(firstValue(max, "SELECT string_agg(labeler, ',') FROM labels"), std::string("ana"));
        // A client that connects with the group as its role (libpq's options) is still ana.
        auto store = openOrFail(as("ana", db) + "&options=-c%20role%3Dd2dpo_labeler");
        QVERIFY(store);
        QCOMPARE(store->teamIdentity(), std::string("ana"));
        QVERIFY(store->addLabel(2, Choice::Right, "ana", 5));
        const auto asGroup = store->addLabel(3, Choice::Right, "d2dpo_labeler", 5);
        QCOMPARE(asGroup.errorCode(), ErrorCode::Denied);
        qInfo("labelling as the group: %s", asGroup.error().c_str());
        const auto progress = openOrFail(as("max", db))->teamProgress().value();
        QCOMPARE(progress.size(), size_t(1));
        QCOMPARE(progress[0].labeler, std::string("ana"));
        QCOMPARE(progress[0].labels, int64_t(2));
    }

    void onlyTheStoresClaimMakesALease()
    {
        const std::string db = teamStore(40, 1, 600);
        const std::string ana = as("ana", db);
        for (const char* attempt : {"INSERT INTO leases VALUES (1, 'ana', 9000000000000000000)",
                                    "UPDATE leases SET expires_at = 9000000000000000000"})
            QVERIFY2(refused(refusal(ana, attempt)), attempt);
        // Twenty pairs at once: the server leases at most 16, for the queue's lease time only.
        int64_t rows = -1;
        QVERIFY(refusal(ana, "SELECT d2dpo_claim_pairs(20, '')", &rows).empty());
        QCOMPARE(rows, int64_t(QueueSettings::kMaxLeasesPerLabeler));
        const std::string longest =
            firstValue(as("max", db), "SELECT max(expires_at) - CAST(extract(epoch FROM now()) AS BIGINT) FROM leases");
        QVERIFY2(std::stoll(longest) <= 600 && std::stoll(longest) >= 590, longest.c_str());
        auto store = openOrFail(ana);
        QCOMPARE(store->claimPairs("ana", 20).value().size(), size_t(QueueSettings::kMaxLeasesPerLabeler));
        // Ben still finds the other 24 pairs waiting for him.
        auto ben = openOrFail(as("ben", db));
        QCOMPARE(ben->claimPairs("ben", 16).value().size(), size_t(16));
        QCOMPARE(ben->counts("ben").value().pending, int64_t(40));
        // Nor can a lease be taken in another's name through the store.
        QCOMPARE(store->claimPairs("ben", 1).errorCode(), ErrorCode::Denied);
    }

    void idsTimesAndDecisionTimesAreTheServers()
    {
        const std::string db = teamStore(60, 1);
        const std::string ana = as("ana", db);
        // Ids ahead of the sequence, a time of her choosing: no raw insert, no sequence to move.
        QVERIFY(refused(refusal(ana, "INSERT INTO labels (id, pair_id, choice, labeler, decide_ms, created_at) "
                                     "VALUES (1000, 1, 'left', 'ana', 1, '1999-01-01')")));
        QVERIFY(refused(refusal(ana, "SELECT nextval(pg_get_serial_sequence('labels', 'id'))")));
        QVERIFY(refused(refusal(ana, "SELECT setval(pg_get_serial_sequence('labels', 'id'), 1000)")));
        QVERIFY(refusal(ana, "SELECT d2dpo_claim_pairs(2, '')").empty());
        QCOMPARE(firstValue(ana, "SELECT d2dpo_add_label(1, 'left', 9000000000000000)"), std::string("1"));
        QCOMPARE(firstValue(ana, "SELECT d2dpo_add_label(2, 'left', -5)"), std::string("2"));
        const std::string max = as("max", db);
        QCOMPARE(firstValue(max, "SELECT decide_ms FROM labels WHERE id = 1"), std::string("86400000"));
        QCOMPARE(firstValue(max, "SELECT decide_ms FROM labels WHERE id = 2"), std::string("0"));
        QCOMPARE(firstValue(max, "SELECT count(*) FROM labels WHERE created_at LIKE '20__-__-__T__:__:__.___Z' "
                                 "AND undone_at IS NULL"),
                 std::string("2"));
        // Ben labels every other pair without losing one.
        auto ben = openOrFail(as("ben", db));
        for (auto held = ben->claimPairs("ben", 16); held && !held->empty(); held = ben->claimPairs("ben", 16))
            for (const ShownPair& pair : held.value())
                QVERIFY(ben->addLabel(pair.id, Choice::Right, "ben", 10));
        QCOMPARE(firstValue(max, "SELECT count(*) FROM labels WHERE labeler = 'ben'"), std::string("58"));
    }

    void theFunctionsKeepTheStoresRules()
    {
        const std::string db = storeWithBensWork(4, 1);
        const std::string ana = as("ana", db), max = as("max", db);
        // Ben's label on pair 1 (overlap 1): ana cannot add a second, nor undo his.
        QVERIFY(!refusal(ana, "SELECT d2dpo_add_label(1, 'right', 5)").empty());
        QCOMPARE(firstValue(ana, "SELECT d2dpo_undo_label(1)"), std::string("<NULL>"));
        QCOMPARE(firstValue(max, "SELECT count(*) FROM labels WHERE undone_at IS NULL"), std::string("1"));
        // A temporary table of her own cannot stand in for the settings the functions read.
        QVERIFY(!refusal(ana, "CREATE TEMP TABLE settings (key text, value text); "
                              "INSERT INTO settings VALUES ('overlap', '100'); SELECT d2dpo_add_label(1, 'left', 5)")
                     .empty());
        // Nor may she make temporary tables at all (they take the server's disk).
        QVERIFY(refused(refusal(ana, "CREATE TEMP TABLE filler (x text)")));
        QCOMPARE(firstValue(max, "SELECT count(*) FROM labels WHERE pair_id = 1"), std::string("1"));
        // Her own label, undone through the store, keeps its row.
        auto store = openOrFail(ana);
        const int64_t mine = store->claimPairs("ana", 1).value().at(0).id;
        QVERIFY(store->addLabel(mine, Choice::Left, "ana", 5));
        QCOMPARE(store->undoLastLabel("ana").value().value_or(0), mine);
        QVERIFY(store->addLabel(mine, Choice::Right, "ana", 5)); // an undone pair is hers to label again
        // A pair deleted after it was handed out is not found (her outbox drops the choice, with why).
        const int64_t next = store->claimPairs("ana", 1).value().at(0).id;
        QVERIFY(refusal(m_server->superuserUrl(db), "DELETE FROM pairs WHERE id = " + std::to_string(next)).empty());
        const auto gone = store->addLabel(next, Choice::Left, "ana", 5);
        QCOMPARE(gone.errorCode(), ErrorCode::NotFound);
        qInfo("a deleted pair: %s", gone.error().c_str());
        QCOMPARE(store->undoLastLabel("ben").errorCode(), ErrorCode::Denied);
        QCOMPARE(firstValue(max, "SELECT count(*) FROM labels WHERE undone_at IS NOT NULL"), std::string("1"));
    }

    void aGoldPairsAnswerAndAComparisonsModelsStayHidden()
    {
        const std::string db = teamStore(0);
        auto owner = openOrFail(m_server->superuserUrl(db));
        QVERIFY(owner->addModel(modelRecord("m1", "", "pretrained")));
        QVERIFY(owner->addModel(modelRecord("m2", "", "pretrained")));
        QVERIFY(owner->addGoldPairs({{somePairs(2)[0], Choice::Left}, {somePairs(2)[1], Choice::Right}}, "gold"));
        std::vector<ShownPair> compared = somePairs(4);
        for (ShownPair& pair : compared) {
            pair.leftModelId = "m1";
            pair.rightModelId = "m2";
        }
        QVERIFY(owner->addComparison("binary-integers:8", {"m1", "m2"}, compared));
        QVERIFY(owner->addPairs({{0, "0101", "0110", "m1", "m2", "binary-integers:4"}}, "generated"));
        const std::string ana = as("ana", db);
        for (const char* attempt :
             {"SELECT gold_choice FROM pairs", "SELECT * FROM pairs", "SELECT model_id FROM sequences",
              "SELECT * FROM sequences", "SELECT margin_model FROM pairs", "SELECT models_json FROM comparisons",
              // nor anything that tells a gold pair from another: its purpose, where and when it came
              // from, its margin (gold pairs are never scored), its count of labels and leases
              "SELECT purpose FROM pairs", "SELECT source FROM pairs", "SELECT created_at FROM pairs",
              "SELECT margin FROM pairs", "SELECT created_at FROM sequences", "SELECT * FROM label_tally",
              "SELECT * FROM active_leases", "SELECT * FROM d2dpo_queue('ana', 10, '', false)"})
            QVERIFY2(refused(refusal(ana, attempt)), attempt);
        // Her queue, built by the server, mixes gold pairs (1 and 2) in like any other.
        QueueSettings settings;
        settings.goldRate = 0.5;
        QVERIFY(owner->setQueueSettings(settings));
        auto store = openOrFail(ana);
        const auto pending = store->pendingPairs(20, "", "ana").value();
        QCOMPARE(pending.size(), size_t(7));
        std::vector<int64_t> pendingIds;
        for (const ShownPair& pair : pending) {
            QVERIFY(pair.leftModelId.empty() && pair.rightModelId.empty());
            pendingIds.push_back(pair.id);
        }
        QCOMPARE(store->pair(7).value().leftModelId, std::string());
        QCOMPARE(owner->pair(7).value().leftModelId, std::string("m1")); // a maintainer's view keeps it
        // A pair the queue did not hand her is refused in the same words, gold or not: no id is
        // probed for gold.
        const auto gold = store->addLabel(1, Choice::Right, "ana", 5);
        const auto ordinary = store->addLabel(7, Choice::Right, "ana", 5);
        QCOMPARE(gold.errorCode(), ErrorCode::Denied);
        QCOMPARE(ordinary.errorCode(), ErrorCode::Denied);
        qInfo("a pair not handed to her: %s", gold.error().c_str());
        QCOMPARE(QString::fromStdString(gold.error()).replace(QStringLiteral("pair 1 "), QStringLiteral("pair N ")),
                 QString::fromStdString(ordinary.error()).replace(QStringLiteral("pair 7 "), QStringLiteral("pair N ")));
        // The queue she claims is the one she was shown; she labels all of it, gold pairs too, and
        // her own labels read back tell none of them gold.
        QCOMPARE(store->counts("ana").value().pending, int64_t(5)); // what waits: gold pairs are not counted
        const auto claimed = store->claimPairs("ana", 16).value();
        std::vector<int64_t> claimedIds;
        for (const ShownPair& pair : claimed) {
            claimedIds.push_back(pair.id);
            QVERIFY(store->addLabel(pair.id, Choice::Right, "ana", 5));
        }
        QCOMPARE(claimedIds, pendingIds);
        QCOMPARE(store->labelledPairs("ana").value().size(), size_t(7));
        for (const JudgedLabel& label : store->judgedLabels().value())
            QVERIFY(label.purpose != PairPurpose::Gold);
        QCOMPARE(store->counts("ana").value().pending, int64_t(0));
    }

    void noLabelerCanHoldTheOthersWritesUp()
    {
        const std::string db = teamStore(4, 2);
        // Ana holds every lock she may take, in a session that stays open.
        PGconn* ana = PQconnectdb(as("ana", db).c_str());
        QCOMPARE(PQstatus(ana), CONNECTION_OK);
        for (const char* hold : {"SELECT pg_advisory_lock(1144144976)", "SELECT pg_advisory_lock(1144148565, 1)", "BEGIN",
                                 "LOCK TABLE labels IN ACCESS SHARE MODE", "LOCK TABLE store_meta IN ACCESS SHARE MODE",
                                 // the store's functions, called inside the transaction she keeps open
                                 "SELECT d2dpo_claim_pairs(2, '')", "SELECT d2dpo_add_label(1, 'left', 5)",
                                 "SELECT d2dpo_release_leases()"}) {
            PGresult* result = PQexec(ana, hold);
            QVERIFY2(PQresultStatus(result) == PGRES_TUPLES_OK || PQresultStatus(result) == PGRES_COMMAND_OK, hold);
            PQclear(result);
        }
        const std::string url = as("ana", db);
        for (const char* attempt : {"LOCK TABLE store_meta IN EXCLUSIVE MODE", "LOCK TABLE leases IN EXCLUSIVE MODE",
                                    "LOCK TABLE labels IN ROW EXCLUSIVE MODE", "LOCK TABLE settings IN EXCLUSIVE MODE"})
            QVERIFY2(refused(refusal(url, "BEGIN; " + std::string(attempt))), attempt);
        // Ben and the maintainer write as ever (a statement that waited 5 s would fail the test).
        auto ben = openOrFail(as("ben", db) + "&options=-c%20statement_timeout%3D5000");
        QVERIFY(ben);
        const auto claimed = ben->claimPairs("ben", 2);
        QVERIFY2(claimed && claimed->size() == 2, claimed ? "" : claimed.error().c_str());
        for (const ShownPair& pair : claimed.value())
            QVERIFY(pair.id != 1); // the pair she is labelling is skipped, not waited for
        QVERIFY(ben->addLabel(claimed->front().id, Choice::Left, "ben", 10));
        QVERIFY(ben->releaseLeases("ben"));
        auto max = openOrFail(as("max", db) + "&options=-c%20statement_timeout%3D5000");
        QVERIFY(max && max->addPairs(somePairs(1), "generated"));
        PQfinish(ana);
        // Nor can one call hold many pairs: a claim of 100000 takes at most 16.
        int64_t rows = -1;
        QVERIFY(refusal(url, "SELECT d2dpo_claim_pairs(100000, '')", &rows).empty());
        QVERIFY2(rows >= 0 && rows <= QueueSettings::kMaxLeasesPerLabeler, qPrintable(QString::number(rows)));
    }

    void aLabelsTimeIsWhenItCameAndAHeldPairIsTheHoldersToLabel()
    {
        const std::string db = teamStore(4, 1);
        const std::string ana = as("ana", db), max = as("max", db);
        // A transaction begun long before the label cannot date it back.
        const double before = std::stod(firstValue(max, "SELECT extract(epoch FROM clock_timestamp())"));
        QVERIFY(refusal(ana, "BEGIN; SELECT pg_sleep(1.5); SELECT d2dpo_claim_pairs(2, ''); "
                             "SELECT d2dpo_add_label(1, 'left', 5); COMMIT")
                    .empty());
        const double created =
            std::stod(firstValue(max, "SELECT extract(epoch FROM CAST(created_at AS timestamptz)) FROM labels"));
        QVERIFY2(created >= before + 1.4, qPrintable(QString::number(created - before)));
        // Her lease on pair 2 runs out and ben takes it (overlap 1): her late label on it is
        // refused, his goes through.
        QVERIFY(refusal(max, "UPDATE leases SET expires_at = 0 WHERE labeler = 'ana'").empty());
        auto ben = openOrFail(as("ben", db));
        QCOMPARE(ben->claimPairs("ben", 3).value().size(), size_t(3));
        const std::string taken = refusal(ana, "SELECT d2dpo_add_label(2, 'left', 5)");
        QVERIFY2(taken.find("held by other labelers") != std::string::npos, taken.c_str());
        QVERIFY(ben->addLabel(2, Choice::Right, "ben", 5));
    }

    void theFunctionsRunAsTheStoresOwnerWhoeverUpgradedThem()
    {
        std::string error;
        QVERIFY2(m_server->createLoginRole("olga", kPassword, &error), error.c_str());
        const std::string db = m_server->createDatabase("owned", "olga", &error);
        QVERIFY2(!db.empty(), error.c_str());
        QVERIFY(openOrFail(as("olga", db))); // olga makes the store: she owns it
        QVERIFY2(m_server->exec(db, "DELETE FROM store_meta WHERE key = 'access_version'", &error), error.c_str());
        QVERIFY(openOrFail(m_server->superuserUrl(db))); // a superuser brings its rules up to date
        const std::string owner = m_server->superuserUrl(db);
        QCOMPARE(firstValue(owner, "SELECT count(*) FROM pg_proc WHERE proname LIKE 'd2dpo%' AND proowner <> "
                                   "(SELECT relowner FROM pg_class WHERE oid = 'store_meta'::regclass)"),
                 std::string("0"));
        QCOMPARE(firstValue(owner, "SELECT count(*) FROM pg_proc WHERE proname LIKE 'd2dpo%' AND prosecdef"),
                 std::string("8"));
        QCOMPARE(firstValue(owner, "SELECT count(*) FROM pg_class WHERE relname IN ('claim_turns', 'lease_tally') AND "
                                   "relowner <> (SELECT relowner FROM pg_class WHERE oid = 'store_meta'::regclass)"),
                 std::string("0"));
        QCOMPARE(firstValue(owner, "SELECT has_schema_privilege('public', 'public', 'CREATE')"), std::string("f"));
    }

    void aStoreWithOlderRulesIsUpgradedByItsOwnerOnly()
    {
        const std::string db = teamStore(1);
        std::string error;
        QVERIFY2(m_server->exec(db, "DELETE FROM store_meta WHERE key = 'access_version'", &error), error.c_str());
        const auto refusedOpen = PreferenceStore::open(as("ana", db));
        QVERIFY(!refusedOpen);
        qInfo("a labeler on an older store: %s", refusedOpen.error().c_str());
        QVERIFY(refusedOpen.error().find("only its owner may upgrade them") != std::string::npos);
        QVERIFY(openOrFail(m_server->superuserUrl(db)));
        QCOMPARE(firstValue(as("ana", db), "SELECT value FROM store_meta WHERE key = 'access_version'"),
                 std::to_string(kPostgresAccessVersion));
        QVERIFY(openOrFail(as("ana", db)));
    }
};

QTEST_GUILESS_MAIN(TestTeamHostile)
#include "tst_teamhostile.moc"
