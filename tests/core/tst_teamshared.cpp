// SPDX-License-Identifier: GPL-3.0-or-later
// What a team shares beyond labels, on a real PostgreSQL server: a session without an outbox gives
// its leased pairs back when it closes; a model's checkpoint made on one
// machine reaches every maintainer's machine through the store, and goes along with a copy; a
// run is alive while its process lives, on whichever machine, and is marked interrupted once killed.
#include <QtTest/QtTest>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include "jobs/dpojob.h"
#include "jobs/runending.h"
#include "labeling/labelsession.h"
#include "support/listenerrecorder.h"
#include "support/tinycheckpoint.h"
#include "support/tinyconfigs.h"
#include "support/teamstorefixture.h"

using namespace d2dpo;
using namespace d2dpo::test;

class TestTeamShared final : public TeamStoreFixture {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { startTeam(); }

    void aClosedSessionGivesItsPairsBack()
    {
        const std::string db = teamStore(3, 1);
        auto ana = openOrFail(as("ana", db));
        auto ben = openOrFail(as("ben", db));
        {
            LabelSession session(*ana, "");
            QVERIFY(session.advance());
            QVERIFY(session.current());
            QVERIFY(ben->claimPairs("ben", 3).value().empty()); // ana holds all three
        }
        QCOMPARE(ben->claimPairs("ben", 3).value().size(), size_t(3)); // given back when she closed
    }

    void twoWindowsOfOneLabelerTakeTurnsToClaim()
    {
        const std::string db = teamStore(40, 1);
        // Her first window claims inside a transaction still open; her second claims meanwhile.
        PGconn* first = PQconnectdb(as("ana", db).c_str());
        PGconn* second = PQconnectdb(as("ana", db).c_str());
        QCOMPARE(PQstatus(first), CONNECTION_OK);
        QCOMPARE(PQstatus(second), CONNECTION_OK);
        PQclear(PQexec(first, "BEGIN"));
        PGresult* claimed = PQexec(first, "SELECT d2dpo_claim_pairs(16, '')");
        QCOMPARE(PQntuples(claimed), 16);
        PQclear(claimed);
        QVERIFY(PQsendQuery(second, "SELECT d2dpo_claim_pairs(16, '')"));
        QTest::qWait(300); // the second waits for its turn
        PQclear(PQexec(first, "COMMIT"));
        PGresult* after = PQgetResult(second);
        QCOMPARE(PQresultStatus(after), PGRES_TUPLES_OK);
        QCOMPARE(PQntuples(after), 16); // the 16 she holds already, not 16 more
        PQclear(after);
        while (PGresult* rest = PQgetResult(second))
            PQclear(rest);
        PQfinish(first);
        PQfinish(second);
        QCOMPARE(firstValue(as("max", db), "SELECT count(*) FROM leases WHERE labeler = 'ana'"), std::string("16"));
    }

    void anUpgradeHeldUpByAnOpenTransactionSaysSo()
    {
        const std::string db = teamStore(2, 1);
        // A labeler's psql reads the labels and leaves its transaction open.
        PGconn* idle = PQconnectdb(as("ana", db).c_str());
        QCOMPARE(PQstatus(idle), CONNECTION_OK);
        PQclear(PQexec(idle, "BEGIN"));
        PQclear(PQexec(idle, "SELECT count(*) FROM labels"));
        std::string error;
        QVERIFY2(m_server->exec(db, "DELETE FROM store_meta WHERE key = 'access_version'", &error), error.c_str());
        const auto held = PreferenceStore::open(m_server->superuserUrl(db));
        QVERIFY(!held);
        qInfo("the owner's upgrade: %s", held.error().c_str());
        QVERIFY(held.error().find("a transaction left open") != std::string::npos);
        PQfinish(idle);
        QVERIFY(openOrFail(m_server->superuserUrl(db))); // and goes through once it has ended
    }

    void aCheckpointReachesEveryMaintainersMachine()
    {
        const std::string db = teamStore(0);
        qputenv("XDG_CACHE_HOME", m_dir.filePath("cache").toUtf8());
        std::string bytes(300'000, '\0');
        for (size_t i = 0; i < bytes.size(); ++i)
            bytes[i] = char((i * 7919) % 251); // every byte value, zeros included
        const std::string made = m_dir.filePath("made-here.d2dpo").toStdString();
        std::ofstream(made, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
        {
            auto max = openOrFail(as("max", db));
            ModelRecord model = modelRecord("shared1", "", "pretrained");
            model.path = made;
            QVERIFY(max->addModel(model));
            QCOMPARE(max->model("shared1").value()->path, made); // on its own machine: its own file
        }
        QVERIFY(std::filesystem::remove(made)); // another machine: that path is not there
        auto other = openOrFail(m_server->superuserUrl(db));
        const std::string fetched = other->model("shared1").value()->path;
        QVERIFY2(fetched != made && fetched.find("team-models") != std::string::npos, fetched.c_str());
        std::ifstream in(fetched, std::ios::binary);
        QVERIFY(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()) == bytes);
        QCOMPARE(other->models().value().front().path, fetched); // read from the cache from now on
        // Labelers read no models, their files neither.
        QVERIFY(!refusal(as("ana", db), "SELECT * FROM model_files").empty());
        // A copy takes the files along.
        const std::string file = m_dir.filePath("with-files.sqlite").toStdString();
        auto copy = openOrFail(file);
        QVERIFY(PreferenceStore::copyAll(*other, *copy));
        SQLite::Database sqlite(file);
        SQLite::Statement q(sqlite, "SELECT bytes FROM model_files WHERE model_id = 'shared1'");
        QVERIFY(q.executeStep());
        const SQLite::Column column = q.getColumn(0);
        QVERIFY(std::string(static_cast<const char*>(column.getBlob()), size_t(column.getBytes())) == bytes);
        // Deleting the model deletes its file from the store.
        QVERIFY(other->deleteModel("shared1"));
        int64_t rows = -1;
        QVERIFY(refusal(m_server->superuserUrl(db), "SELECT 1 FROM model_files", &rows).empty());
        QCOMPARE(rows, int64_t(0));
    }

    void aRunIsAliveWhileItsProcessLivesOnAnyMachine()
    {
        const std::string db = teamStore(0);
        auto owner = openOrFail(m_server->superuserUrl(db));
        QVERIFY(owner->addModel(modelRecord("ref", "", "pretrained")));
        RunRecord record;
        record.kind = RunKind::D2dpo;
        record.referenceModelId = "ref";
        record.lockPath = "/on/another/machine/run.lock"; // no such file here: liveness is the server's
        int ends[2];
        QVERIFY(::pipe(ends) == 0);
        const pid_t child = ::fork();
        if (child == 0) { // a trainer's process: starts the run and trains until it is killed
            ::prctl(PR_SET_PDEATHSIG, SIGKILL); // never outlives a suite that stopped early
            int64_t id = 0;
            auto store = PreferenceStore::open(as("max", db)); // open while it trains
            if (store)
                if (auto run = store.value()->startRun(record); run)
                    id = run.value();
            (void)!::write(ends[1], &id, sizeof id);
            ::pause();
            ::_exit(0);
        }
        int64_t runId = 0;
        QCOMPARE(::read(ends[0], &runId, sizeof runId), ssize_t(sizeof runId));
        QVERIFY(runId > 0);
        QCOMPARE(owner->markDeadRunsInterrupted().value(), int64_t(0)); // alive: its connection holds the lock
        QCOMPARE(openOrFail(m_server->superuserUrl(db))->run(runId).value()->status, RunStatus::Running);
        ::kill(child, SIGKILL);
        ::waitpid(child, nullptr, 0);
        // The server drops its lock with its connection; the next look marks it (QTRY reads twice: a status).
        const auto statusAfterLooking = [&] {
            (void)owner->markDeadRunsInterrupted();
            return owner->run(runId).value()->status;
        };
        QTRY_COMPARE(statusAfterLooking(), RunStatus::Interrupted);
        // A run of this very connection is alive too, and finishing it lets its lock go.
        const int64_t own = owner->startRun(record).value();
        QCOMPARE(owner->markDeadRunsInterrupted().value(), int64_t(0));
        QVERIFY(owner->finishRun(own, RunStatus::Completed, "", ""));
        int64_t held = -1;
        QVERIFY(refusal(m_server->superuserUrl(db), "SELECT 1 FROM pg_locks WHERE locktype = 'advisory'", &held).empty());
        QCOMPARE(held, int64_t(0));
    }

    void aTrainingRunIsRecordedInTheTeamStore()
    {
        const std::string db = teamStore(0);
        const std::string reference = m_dir.filePath("team-ref.d2dpo").toStdString();
        test::TinyCheckpointOptions tiny;
        tiny.step = 1;
        QVERIFY(test::writeTinyCheckpoint(reference, tiny).ok());
        DpoJobSpec job;
        job.referencePath = reference;
        job.storePath = m_server->url("max", kPassword, db); // a URL stays a URL, never a folder
        job.source = PreferenceSource::RulePairs;
        job.rulePairs = 64;
        job.dpo = test::tinyDpo(2);
        job.schedule = test::tinySchedule();
        job.schedule.evalSamples = 100;
        job.device = "cpu";
        job.outputFolder = m_dir.filePath("team-run").toStdString();
        test::ListenerRecorder log;
        StopToken stop;
        const DpoJobOutcome outcome = runDpoJob(job, log, stop);
        QVERIFY2(outcome.finished.status == RunStatus::Completed, outcome.finished.error.c_str());
        auto other = openOrFail(m_server->superuserUrl(db)); // another machine's view of the store
        const auto runs = other->runs().value();
        QCOMPARE(runs.size(), size_t(1));
        QCOMPARE(runs[0].status, RunStatus::Completed);
        QCOMPARE(runs[0].resultModelId, outcome.resultModelId);
        QVERIFY(!other->metricSeries(runs[0].id, "loss").value().empty());
        int64_t files = -1;
        QVERIFY(refusal(m_server->superuserUrl(db),
                        "SELECT 1 FROM model_files WHERE model_id = '" + outcome.resultModelId + "'", &files)
                    .empty());
        QCOMPARE(files, int64_t(1)); // the fine-tuned checkpoint went into the store with its model
    }

    /// A tiny run as `role` on the store `db`, its checkpoints in `folder`.
    DpoJobSpec tinyTeamRun(const std::string& db, const std::string& role, const std::string& folder)
    {
        const std::string reference = m_dir.filePath(QString::fromStdString(folder + "-ref.d2dpo")).toStdString();
        test::TinyCheckpointOptions tiny;
        tiny.step = 1;
        if (!test::writeTinyCheckpoint(reference, tiny))
            return {};
        DpoJobSpec job;
        job.referencePath = reference;
        job.storePath = as(role, db);
        job.source = PreferenceSource::RulePairs;
        job.rulePairs = 64;
        job.dpo = test::tinyDpo(8);
        job.schedule = test::tinySchedule();
        job.schedule.evalEvery = 4;
        job.schedule.evalSamples = 50;
        job.device = "cpu";
        job.outputFolder = m_dir.filePath(QString::fromStdString(folder)).toStdString();
        return job;
    }

    /// Cuts `role` off the server as a restart would (its sessions ended, new ones refused), or lets it back.
    void cut(const std::string& role, bool off)
    {
        std::string error;
        QVERIFY2(m_server->exec("postgres",
                                off ? "ALTER ROLE " + role +
                                          " NOLOGIN; SELECT pg_terminate_backend(pid) FROM "
                                          "pg_stat_activity WHERE usename = '" +
                                          role + "'"
                                    : "ALTER ROLE " + role + " LOGIN",
                                &error),
                 error.c_str());
    }

    void aRunLivesThroughAServerRestart()
    {
        makeRole("rita", "d2dpo_maintainer");
        const std::string db = teamStore(0);
        DpoJobSpec job = tinyTeamRun(db, "rita", "restart-run");
        job.schedule.evalEvery = 2; // the evaluation at step 2 finds the server gone, the one at 4 back
        test::ListenerRecorder log;
        std::vector<RunStatus> seen; // the run as another maintainer's machine saw it along the way
        auto look = [&] {
            auto other = openOrFail(m_server->superuserUrl(db)); // opening marks dead runs interrupted
            seen.push_back(other ? other->runs().value().at(0).status : RunStatus::Failed);
        };
        log.actions[2] = [&] { cut("rita", true), look(); };
        log.actions[3] = [&] { cut("rita", false); };
        log.actions[6] = look; // after the evaluation at step 4 sent what was kept
        StopToken stop;
        const DpoJobOutcome outcome = runDpoJob(job, log, stop);
        QVERIFY2(outcome.finished.status == RunStatus::Completed, outcome.finished.error.c_str());
        QCOMPARE(seen.size(), size_t(2));
        QCOMPARE(seen[0], RunStatus::Interrupted); // its lock went with its connection
        QCOMPARE(seen[1], RunStatus::Running); // and was taken again with the next one
        QVERIFY2(log.log.find("the store is back") != std::string::npos, log.log.c_str());
        auto other = openOrFail(m_server->superuserUrl(db));
        const RunRecord run = other->runs().value().at(0);
        QCOMPARE(run.status, RunStatus::Completed);
        QCOMPARE(run.resultModelId, outcome.resultModelId);
        const auto loss = other->metricSeries(run.id, "loss").value();
        QCOMPARE(loss.size(), log.progress.size()); // no step lost while the server was away
    }

    void aRunThatCannotRecordItsEndSaysHowAndFailsLoudly()
    {
        makeRole("rita", "d2dpo_maintainer");
        const std::string db = teamStore(0);
        DpoJobSpec job = tinyTeamRun(db, "rita", "unrecorded-run");
        job.storeWaitSeconds = 600; // a stop ends the wait, not the clock
        test::ListenerRecorder log;
        StopToken stop;
        log.actions[8] = [&] { cut("rita", true); };
        log.onLine = [&](const std::string& line) {
            if (line.find("the store cannot be reached to record") != std::string::npos)
                stop.requestStop();
        };
        const DpoJobOutcome outcome = runDpoJob(job, log, stop);
        cut("rita", false);
        QCOMPARE(outcome.finished.status, RunStatus::Failed);
        const std::string& error = outcome.finished.error;
        qInfo("%s", error.c_str());
        QVERIFY2(error.find("the run ended (completed)") != std::string::npos, error.c_str());
        QVERIFY2(error.find("d2dpo store record-run --db 'postgresql://rita@") != std::string::npos, error.c_str());
        QVERIFY2(error.find(kPassword) == std::string::npos, error.c_str());
        QVERIFY(!outcome.finished.lastCheckpointPath.empty());
        auto rita = openOrFail(as("rita", db)); // the run's process is gone: its run is interrupted
        QCOMPARE(rita->runs().value().at(0).status, RunStatus::Interrupted);
        QVERIFY(recordRunEnd(*rita, outcome.runId, RunStatus::Completed, "", outcome.finished.lastCheckpointPath));
        const RunRecord run = rita->runs().value().at(0);
        QCOMPARE(run.status, RunStatus::Completed);
        QVERIFY(!run.resultModelId.empty());
        QVERIFY(rita->model(run.resultModelId).value().has_value());
    }
};

QTEST_GUILESS_MAIN(TestTeamShared)
#include "tst_teamshared.moc"
