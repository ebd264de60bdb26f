// SPDX-License-Identifier: GPL-3.0-or-later
// A team store on a real PostgreSQL server (support/pgserver.h): each labeler only as itself,
// enforced by the database (grants and row-level security) and tried by breaking it; pairs
// handed out under leases that expire when a labeler is killed; eight labelers in processes of
// their own at once; a copy SQLite -> PostgreSQL -> SQLite that changes nothing; a server that
// stops answering is an error after the answer limit, never a hang.
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include "support/pgbackends.h"
#include "support/teamlabeler.h"
#include "support/teamstorefixture.h"
#include "labeling/labeleridentity.h"

using namespace d2dpo;
using namespace d2dpo::test;

class TestTeamStore final : public TeamStoreFixture {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { startTeam(); }

    void eachLabelerIsOnlyItself()
    {
        const std::string db = teamStore(4, 2);
        auto ana = openOrFail(as("ana", db));
        auto ben = openOrFail(as("ben", db));
        auto max = openOrFail(as("max", db));
        QVERIFY(ana && ben && max);
        QCOMPARE(ana->teamIdentity(), std::string("ana"));
        QVERIFY(!ana->canMaintain());
        QVERIFY(max->canMaintain());
        QCOMPARE(ana->pendingPairs(10).value().size(), size_t(4));
        // Each labels what the queue hands it (overlap 2: both may hold the same pairs).
        const auto pairs = ana->claimPairs("ana", 4).value();
        QCOMPARE(pairs.size(), size_t(4));
        QCOMPARE(ben->claimPairs("ben", 1).value().size(), size_t(1));
        QVERIFY(ben->addLabel(pairs[0].id, Choice::Left, "ben", 500));
        QVERIFY(ana->addLabel(pairs[1].id, Choice::Right, "ana", 500));
        // One label each of an overlap of 2: all four still pending; only a maintainer counts them.
        QCOMPARE(max->pendingMargins().value().pending, int64_t(4));
        QCOMPARE(ana->pendingMargins().errorCode(), ErrorCode::Denied);

        // Labelling as someone else: refused (and the server labels only as the role that logged in).
        const auto forged = ana->addLabel(pairs[2].id, Choice::Left, "ben", 500);
        QVERIFY(!forged);
        QCOMPARE(forged.errorCode(), ErrorCode::Denied);
        qInfo("ana labelling as ben: %s", forged.error().c_str());
        QVERIFY(forged.error().find("labels only as ana") != std::string::npos);
        // Deleting others' labels, reading the runs, adding a model: refused by the grants.
        const auto deleted = ana->deleteLabels({std::nullopt, "ben", ""}, false);
        qInfo("ana deleting ben's labels: %s", deleted.error().c_str());
        QCOMPARE(deleted.errorCode(), ErrorCode::Denied);
        const auto runs = ana->runs();
        QCOMPARE(runs.errorCode(), ErrorCode::Denied);
        qInfo("ana reading the runs: %s", runs.error().c_str());
        const auto model = ana->addModel(modelRecord("m1", "", "pretrained"));
        qInfo("ana adding a model: %s", model.error().c_str());
        QCOMPARE(model.errorCode(), ErrorCode::Denied);
        const auto queue = ana->setQueueSettings({1, 0});
        qInfo("ana changing the queue: %s", queue.error().c_str());
        QCOMPARE(queue.errorCode(), ErrorCode::Denied);
        // Undoing ben's label is refused: ana sees and undoes only her own labels.
        QCOMPARE(ana->undoLastLabel("ben").errorCode(), ErrorCode::Denied);
        QCOMPARE(ana->labels(false).value().size(), size_t(1));
        QCOMPARE(max->labels(false).value().size(), size_t(2)); // ben's label stands
        // The team's progress is everyone's to see, without anyone's choices.
        QCOMPARE(ana->counts("ana").value().labelled, int64_t(2));
        QCOMPARE(ana->teamProgress().value().size(), size_t(2));

        // The same in SQL, as a labeler with psql would try it.
        const std::string url = as("ana", db);
        for (const char* attempt :
             {"DROP TABLE labels", "DELETE FROM labels", "UPDATE labels SET labeler = 'ana'", "SELECT * FROM runs",
              "INSERT INTO models (id, kind, name, path, spec_json, "
              "training_json, metrics_json, created_at) VALUES ('x', 'd2dpo', 'x', 'x', '{}', "
              "'{}', '{}', 'now')",
              "CREATE TABLE mine (x int)", "ALTER TABLE labels DISABLE ROW LEVEL SECURITY"}) {
            const std::string message = refusal(url, attempt);
            qInfo("ana: %s -> %s", attempt, message.c_str());
            QVERIFY2(!message.empty(), attempt);
        }
        int64_t rows = -1;
        QVERIFY(refusal(url, "SELECT * FROM labels", &rows).empty());
        QCOMPARE(rows, int64_t(1)); // her own
        // Not even her own rows are hers to write but through the store's functions (tst_teamhostile).
        QVERIFY(!refusal(url, "UPDATE labels SET undone_at = 'x' WHERE labeler = 'ben'", &rows).empty());
        QCOMPARE(max->labels(false).value().size(), size_t(2));
        QVERIFY(max->runs());
    }

    void theLabelerOfATeamStoreIsItsRoleWhateverNameIsGiven()
    {
        const std::string db = teamStore(2, 2);
        auto ana = openOrFail(as("ana", db));
        QVERIFY(ana);
        QCOMPARE(resolveLabeler(*ana, "").value(), std::string("ana"));
        QCOMPARE(resolveLabeler(*ana, " ana ", "someone").value(), std::string("ana"));
        const auto other = resolveLabeler(*ana, "ben");
        QVERIFY(!other);
        QVERIFY2(other.error().find("your database role, ana, not as ben") != std::string::npos, other.error().c_str());
        // A file store takes the name given, else the remembered one.
        QTemporaryDir dir;
        auto file = PreferenceStore::open(dir.filePath("p.db").toStdString());
        QVERIFY(file);
        QCOMPARE(resolveLabeler(*file.value(), "  bo ", "ana").value(), std::string("bo"));
        QCOMPARE(resolveLabeler(*file.value(), "", " ana").value(), std::string("ana"));
        QCOMPARE(resolveLabeler(*file.value(), "", "").value(), std::string());
    }

    void aLeaseKeepsAPairFromOthersUntilItExpires()
    {
        const std::string db = teamStore(2, 1, 2);
        auto ana = openOrFail(as("ana", db));
        auto ben = openOrFail(as("ben", db));
        QVERIFY(ana && ben);
        const auto first = ana->claimPairs("ana", 1).value();
        QCOMPARE(first.size(), size_t(1));
        const auto other = ben->claimPairs("ben", 2).value();
        QCOMPARE(other.size(), size_t(1)); // the one ana does not hold
        QVERIFY(other[0].id != first[0].id);
        QCOMPARE(ana->claimPairs("ana", 1).value()[0].id, first[0].id); // hers again: a restart resumes it
        QVERIFY(!ben->claimPairs("ana", 1)); // nor can ben take leases in her name
        std::this_thread::sleep_for(std::chrono::milliseconds(3100));
        const auto later = ben->claimPairs("ben", 2).value();
        QCOMPARE(later.size(), size_t(2)); // ana's lease expired: her pair went back
        QVERIFY(ben->addLabel(first[0].id, Choice::Left, "ben", 10));
        QCOMPARE(ana->addLabel(first[0].id, Choice::Left, "ana", 10).errorCode(), ErrorCode::AlreadyLabelled);
    }

    void aKilledLabelersPairGoesBackAfterItsLease()
    {
        const std::string db = teamStore(1, 1, 2);
        int ends[2];
        QVERIFY(::pipe(ends) == 0);
        const pid_t child = ::fork();
        if (child == 0) { // a labeler's process: takes the pair, then hangs until killed
            ::prctl(PR_SET_PDEATHSIG, SIGKILL); // never outlives a suite that stopped early
            auto store = PreferenceStore::open(as("ana", db));
            int64_t id = 0;
            if (store)
                if (auto claimed = store.value()->claimPairs("ana", 1); claimed && !claimed->empty())
                    id = claimed.value()[0].id;
            (void)!::write(ends[1], &id, sizeof id);
            ::pause();
            ::_exit(0);
        }
        int64_t held = 0;
        QCOMPARE(::read(ends[0], &held, sizeof held), ssize_t(sizeof held));
        QVERIFY(held > 0);
        ::kill(child, SIGKILL);
        ::waitpid(child, nullptr, 0);
        auto ben = openOrFail(as("ben", db));
        QVERIFY(ben->claimPairs("ben", 1).value().empty()); // still leased to the dead process
        std::this_thread::sleep_for(std::chrono::milliseconds(3100));
        const auto back = ben->claimPairs("ben", 1).value();
        QCOMPARE(back.size(), size_t(1));
        QCOMPARE(back[0].id, held);
    }

    void eightLabelersAtOnceLoseNothing()
    {
        constexpr int kLabelers = 8, kEach = 500, kOverlap = 2;
        // A few pairs more than the labels fill: at the very end, the pairs still open may all be
        // ones the labelers still at work have labelled already (a greedy queue can end so), and
        // a labeler then stops short; with spare pairs each finds its 500.
        const std::string db = teamStore(kLabelers * kEach / kOverlap + 100, kOverlap, 60);
        std::vector<pid_t> children;
        const auto start = std::chrono::steady_clock::now();
        for (int i = 1; i <= kLabelers; ++i) {
            const std::string labeler = "labeler" + std::to_string(i);
            const std::string out = m_dir.filePath(QString::fromStdString(labeler)).toStdString();
            const pid_t child = ::fork();
            if (child == 0) {
                const LabelerRun run = labelAs(as(labeler, db), labeler, kEach);
                std::ofstream file(out);
                file << run.labels << ' ' << run.refused << ' ' << quantile(run.commitMs, 0.5) << ' '
                     << quantile(run.commitMs, 0.99) << '\n'
                     << run.error << '\n';
                file.close();
                ::_exit(run.error.empty() ? 0 : 1);
            }
            children.push_back(child);
        }
        for (pid_t child : children) {
            int status = 0;
            ::waitpid(child, &status, 0);
            QVERIFY(WIFEXITED(status));
        }
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        for (int i = 1; i <= kLabelers; ++i) {
            std::ifstream file(m_dir.filePath(QStringLiteral("labeler%1").arg(i)).toStdString());
            int64_t labels = 0, refused = 0;
            double p50 = 0, p99 = 0;
            file >> labels >> refused >> p50 >> p99;
            std::string error;
            std::getline(file >> std::ws, error);
            QVERIFY2(error.empty(), error.c_str());
            qInfo("labeler%d: %lld labels, %lld refused, commit p50 %.2f ms p99 %.2f ms", i,
                  static_cast<long long>(labels), static_cast<long long>(refused), p50, p99);
            QCOMPARE(labels, int64_t(kEach));
            QCOMPARE(refused, int64_t(0));
        }
        qInfo("%d labels by %d processes in %.1f s", kLabelers * kEach, kLabelers, seconds);
        auto owner = openOrFail(m_server->superuserUrl(db));
        const std::string url = m_server->superuserUrl(db);
        int64_t rows = -1;
        QVERIFY(refusal(url, "SELECT 1 FROM labels WHERE undone_at IS NULL", &rows).empty());
        QCOMPARE(rows, int64_t(kLabelers * kEach)); // no label lost
        QVERIFY(refusal(url, "SELECT pair_id FROM label_tally WHERE active > 2", &rows).empty());
        QCOMPARE(rows, int64_t(0)); // no pair past its overlap
        QVERIFY(refusal(url, "SELECT pair_id, labeler FROM labels GROUP BY pair_id, labeler HAVING count(*) > 1", &rows)
                    .empty());
        QCOMPARE(rows, int64_t(0)); // no pair twice by one labeler
        for (const LabelerProgress& p : owner->teamProgress().value())
            QCOMPARE(p.labels, int64_t(kEach));
    }

    // A server that stops answering (a frozen host, a network that drops packets without a reset)
    // ends a statement after the answer limit with a connection error; libpq alone would wait on it
    // forever, the desktop's window with it. Once the server answers again the store carries on.
    void aSilentServerIsAnErrorAfterTheAnswerLimitNotAHang()
    {
        const std::string db = teamStore(3);
        qputenv("D2DPO_STORE_ANSWER_SECONDS", "2"); // read when the connection is made
        auto ana = openOrFail(as("ana", db));
        qunsetenv("D2DPO_STORE_ANSWER_SECONDS");
        QVERIFY(ana);
        QCOMPARE(ana->pendingPairs(10).value().size(), size_t(3));
        {
            // Released after 30 s at the latest: without the limit the read below then succeeds
            // late, and the test fails rather than hangs.
            StoppedBackends stopped(backendsOf(*m_server, "ana"));
            QVERIFY(stopped.stopped());
            QElapsedTimer clock;
            clock.start();
            const auto pending = ana->pendingPairs(10);
            const qint64 waited = clock.elapsed();
            QVERIFY(!pending);
            qInfo("a silent server, after %lld ms: %s", waited, pending.error().c_str());
            QVERIFY2(pending.error().find("sent nothing for 2 s") != std::string::npos, pending.error().c_str());
            QVERIFY2(waited < 15000, std::to_string(waited).c_str());
        }
        QCOMPARE(ana->pendingPairs(10).value().size(), size_t(3)); // connected again
    }

    void aCopyThereAndBackChangesNothing()
    {
        const std::string file = m_dir.filePath("source.sqlite").toStdString();
        {
            auto source = openOrFail(file);
            QVERIFY(source->addModel(modelRecord("m1", "", "pretrained")));
            RunRecord record;
            record.kind = RunKind::D2dpo;
            record.referenceModelId = "m1";
            const auto run = source->startRun(record);
            QVERIFY(run);
            QVERIFY(source->appendMetrics(run.value(), 3, {{"loss", 0.1234567890123}, {"odd_ratio", 0.5}}));
            QVERIFY(source->addModel(modelRecord("m2", "m1", "d2dpo", run.value())));
            QVERIFY(source->finishRun(run.value(), RunStatus::Completed, "", "m2"));
            const auto ids = source->addPairs(somePairs(5), "generated").value();
            QVERIFY(source->addLabel(ids[0], Choice::Left, "ana", 1200));
            QVERIFY(source->addLabel(ids[1], Choice::Tie, "ana", 800));
            QVERIFY(source->undoLastLabel("ana").value());
            QVERIFY(source->addLabel(ids[2], Choice::Right, "rule:odd", 0));
            QVERIFY(source->saveEvaluation("m2", "s", 100, 7, R"({"odd_ratio":0.9})"));
            QVERIFY(source->setPairMargins({{ids[3], -0.25}}, "m2"));
            QVERIFY(source->importMeasurements({"stability", "lower", "binary-integers:8", 0, 0, 0}, "dms.csv", "d1",
                                               {{"0101", 0.1234567890123, 0.5, 2, 2, 0}, {"0110", -3, std::nullopt, 1, 3, 0}}));
        }
        const std::string db = m_server->createDatabase("copy");
        const std::string back = m_dir.filePath("back.sqlite").toStdString();
        {
            auto source = openOrFail(file);
            auto team = openOrFail(m_server->superuserUrl(db));
            const auto there = PreferenceStore::copyAll(*source, *team);
            QVERIFY2(there, there ? "" : there.error().c_str());
            QVERIFY(!PreferenceStore::copyAll(*source, *team)); // not into a store that has records
            auto returned = openOrFail(back);
            QVERIFY(PreferenceStore::copyAll(*team, *returned));
        }
        const std::vector<std::string> dump = {"SELECT * FROM models ORDER BY id",
                                               "SELECT * FROM runs",
                                               "SELECT * FROM run_metrics ORDER BY name",
                                               "SELECT * FROM sequences",
                                               "SELECT * FROM pairs",
                                               "SELECT * FROM labels",
                                               "SELECT * FROM evaluations",
                                               "SELECT * FROM settings ORDER BY key",
                                               "SELECT * FROM tasks",
                                               "SELECT * FROM assays",
                                               "SELECT * FROM assay_imports",
                                               "SELECT * FROM measurements"};
        QCOMPARE(sqliteDump(back, dump), sqliteDump(file, dump));
        auto again = openOrFail(back);
        QCOMPARE(again->addPairs(somePairs(1), "generated").value()[0], int64_t(6)); // ids go on from the copied
    }

private:
    /// Every row of each query, as text.
    static std::string sqliteDump(const std::string& file, const std::vector<std::string>& queries)
    {
        SQLite::Database db(file);
        std::string out;
        for (const std::string& query : queries) {
            SQLite::Statement q(db, query);
            while (q.executeStep()) {
                for (int i = 0; i < q.getColumnCount(); ++i)
                    out += (q.getColumn(i).isNull() ? std::string("NULL") : q.getColumn(i).getString()) + "|";
                out += "\n";
            }
        }
        return out;
    }
};

QTEST_GUILESS_MAIN(TestTeamStore)
#include "tst_teamstore.moc"
