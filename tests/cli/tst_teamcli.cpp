// SPDX-License-Identifier: GPL-3.0-or-later
// The command line on a team store, against a real PostgreSQL server: `label` labels as the role
// and claims its pairs under the same leases as the desktop; no message shows a password; a role
// whose name holds a line break prints as one line.
#include <QtTest/QtTest>

#include <string>

#include "support/clirun.h"
#include "support/teamstorefixture.h"

using namespace d2dpo;
using namespace d2dpo::test;

namespace {

QString q(const std::string& text) { return QString::fromStdString(text); }

} // namespace

class TestTeamCli final : public TeamStoreFixture {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { startTeam(); }

    void labelOnATeamStoreIsTheRoleAndHeedsLeases()
    {
        const std::string db = teamStore(20, 1);
        // Ben's desktop holds 8 pairs under lease.
        auto ben = openOrFail(as("ben", db));
        QCOMPARE(ben->claimPairs("ben", 8).value().size(), size_t(8));
        const CliRun run = runCli({"label", "--db", q(as("ana", db)), "--threads", "1"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY2(run.out.contains(QStringLiteral("labelled 12 pairs")), qPrintable(run.out));
        auto max = openOrFail(as("max", db));
        for (const LabelRecord& label : max->labels(false).value())
            QCOMPARE(label.labeler, std::string("ana"));
        // Ben's eight are still his to label, none taken from him.
        const auto held = ben->claimPairs("ben", 8).value();
        QCOMPARE(held.size(), size_t(8));
        for (const ShownPair& pair : held)
            QVERIFY(ben->addLabel(pair.id, Choice::Left, "ben", 10));
        // Another name than the role is refused with a sentence.
        expectRefusal({"label", "--db", q(as("ana", db)), "--labeler", "ben"},
                      QStringLiteral("you label as your database role, ana, not as ben"), kExitFailure);
        // Everyone's preferences, with the models behind them, are the maintainers' to export.
        expectRefusal({"prefs", "export", "--db", q(as("ana", db)), "-o", "-"},
                      QStringLiteral("reading the preferences is for the team's maintainers: ana labels on this "
                                     "team store"),
                      kExitFailure);
    }

    void noMessageShowsAPassword()
    {
        const std::string db = teamStore(0);
        QTemporaryDir dir;
        const QString checkpoint = dir.filePath(QStringLiteral("tiny.d2dpo"));
        const CliRun made = runCli({"pretrain", "--steps", "2", "-N", "8", "--eval-samples", "10", "-o", checkpoint});
        QVERIFY2(made.exitCode == 0, qPrintable(made.err));
        const std::string url = as("max", db); // postgresql://max:team-secret@/...
        QVERIFY(url.find(kPassword) != std::string::npos);
        const CliRun pairs = runCli({"pairs", "-c", checkpoint, "--count", "10", "--db", q(url)});
        QVERIFY2(pairs.exitCode == 0, qPrintable(pairs.err));
        QVERIFY2(pairs.out.contains(QStringLiteral("to postgresql://max@")), qPrintable(pairs.out));
        const CliRun labelled = runCli({"label", "--db", q(url)});
        QVERIFY2(labelled.exitCode == 0, qPrintable(labelled.err));
        const CliRun train =
            runCli({"train", "-c", checkpoint, "--db", q(url), "--steps", "1", "--batch", "2", "--eval-every", "1",
                    "--eval-samples", "10", "-o", dir.filePath(QStringLiteral("runs"))});
        QVERIFY2(train.exitCode == 0, qPrintable(train.err));
        QVERIFY2((train.out + train.err).contains(QStringLiteral("recorded in postgresql://max@")),
                 qPrintable(train.out + train.err));
        for (const CliRun& run : {pairs, labelled, train, runCli({"store", "progress", "--db", q(url)})})
            QVERIFY2(!(run.out + run.err).contains(q(kPassword)), qPrintable(run.out + run.err));
        // libpq reads every parameter, decodes keys and takes the last: so does the name shown.
        std::string bare = url;
        bare.erase(bare.find(":" + kPassword + "@"), kPassword.size() + 1);
        for (const std::string& hidden : {bare + "&password=wrong&password=" + kPassword, bare + "&%70assword=" + kPassword,
                                          bare + "&password=" + kPassword + "&sslpassword=" + kPassword}) {
            const CliRun progress = runCli({"store", "progress", "--db", q(hidden)});
            QVERIFY2(progress.exitCode == 0, qPrintable(progress.err));
            std::string elsewhere = hidden; // a database that does not exist: the error names the store
            elsewhere.replace(elsewhere.find("/" + db + "?"), db.size() + 2, "/no_such_store?");
            const CliRun failed = runCli({"store", "progress", "--db", q(elsewhere)});
            QCOMPARE(failed.exitCode, kExitFailure);
            for (const CliRun& run : {progress, failed})
                QVERIFY2(!(run.out + run.err).contains(q(kPassword)), qPrintable(run.out + run.err));
        }
        // A run whose end its store could not record is recorded later, once.
        std::string error;
        QVERIFY2(m_server->exec(db,
                                "INSERT INTO runs (kind, config_json, device, status, started_at) "
                                "VALUES ('d2dpo', '{}', 'cpu', 'interrupted', '2026-11-26T00:00:00Z')",
                                &error),
                 error.c_str());
        const CliRun recorded = runCli({"store", "record-run", "--db", q(url), "--run", "2", "--checkpoint", checkpoint});
        QVERIFY2(recorded.exitCode == 0 && recorded.out.contains(QStringLiteral("run 2 recorded as completed")),
                 qPrintable(recorded.out + recorded.err));
        expectRefusal({"store", "record-run", "--db", q(url), "--run", "2"}, QStringLiteral("run 2 is completed"),
                      kExitFailure);
        expectRefusal({"store", "record-run", "--db", q(url), "--run", "99"}, QStringLiteral("there is no run 99"),
                      kExitFailure);
        // A libpq key=value string given by mistake: refused, and its password not repeated.
        const std::string dsn = "host=" + m_server->socketDir() + " dbname=" + db + " user=max password='" + kPassword +
                                "' port=" + std::to_string(m_server->port());
        const CliRun refusedDsn = runCli({"store", "progress", "--db", q(dsn)});
        QCOMPARE(refusedDsn.exitCode, kExitFailure);
        QVERIFY2(refusedDsn.err.contains(QStringLiteral("key=value connection string")), qPrintable(refusedDsn.err));
        QVERIFY2(!refusedDsn.err.contains(q(kPassword)), qPrintable(refusedDsn.err));
        QVERIFY(!QFileInfo::exists(q(dsn)));
    }

    void aRoleNamedWithALineBreakPrintsAsOneLine()
    {
        const std::string db = teamStore(3);
        const std::string name = "eve\n  mallory                       99        0";
        std::string error;
        QVERIFY2(m_server->exec("postgres",
                                "CREATE ROLE \"" + name + "\" LOGIN PASSWORD '" + kPassword + "' IN ROLE d2dpo_labeler",
                                &error),
                 error.c_str());
        const std::string url = m_server->url(name, kPassword, db);
        const CliRun progress = runCli({"store", "progress", "--db", q(url)});
        QVERIFY2(progress.exitCode == 0, qPrintable(progress.err));
        QVERIFY2(!progress.out.contains(QStringLiteral("\n  mallory")), qPrintable(progress.out));
        QVERIFY2(progress.out.contains(QStringLiteral("eve\\x0a  mallory")), qPrintable(progress.out));
        // Nor can such a role label: its name would print as two lines wherever labels are listed.
        expectRefusal({"label", "--db", q(url)}, QStringLiteral("control characters"), kExitFailure);
        QVERIFY(!refusal(url, "SELECT d2dpo_add_label(1, 'left', 1)").empty());
    }
};

QTEST_GUILESS_MAIN(TestTeamCli)
#include "tst_teamcli.moc"
