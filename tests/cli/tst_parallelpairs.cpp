// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo pairs` in several processes, through the real binary over 127.0.0.1 only: by `--nproc 2`
// into a store file and as torchrun launches (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT per
// process) into a team store on a real PostgreSQL server. Every pair the ranks drew is stored once
// and none twice; rank 0 draws what one process draws, the other rank something else; a rank that
// cannot draw is said and the others' pairs kept; a rank that never comes is given up in time.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <set>
#include <unistd.h>

#include "support/clirun.h"
#include "support/rankprocess.h"
#include "support/teamstorefixture.h"

using namespace d2dpo;
using namespace d2dpo::test;

namespace {

QString q(const std::string& text)
{
    return QString::fromStdString(text);
}

using PairSet = std::multiset<std::pair<std::string, std::string>>;

/// Every pending pair of the store, each as (smaller, larger) sequence, repeats kept.
PairSet pairsIn(const std::string& db)
{
    auto store = PreferenceStore::open(db, PreferenceStore::OpenMode::MustExist);
    if (!store)
        return {};
    PairSet pairs;
    for (const ShownPair& p : store.value()->pendingPairs(1'000'000).value())
        pairs.insert(p.left < p.right ? std::make_pair(p.left, p.right) : std::make_pair(p.right, p.left));
    return pairs;
}

bool noneTwice(const PairSet& pairs)
{
    return std::set<std::pair<std::string, std::string>>(pairs.begin(), pairs.end()).size() == pairs.size();
}

/// The count in "added N pairs" of a run's output (-1 when absent).
int addedIn(const QString& out)
{
    const QString after = out.section(QStringLiteral("added "), 1);
    bool ok = false;
    const int n = after.section(' ', 0, 0).toInt(&ok);
    return ok ? n : -1;
}

} // namespace

class TestParallelPairs final : public TeamStoreFixture {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        const CliRun made = runCli({"pretrain", "--steps", "2", "-N", "8", "--eval-samples", "10", "-o",
                                    m_dir.filePath(QStringLiteral("tiny.d2dpo"))});
        QVERIFY2(made.exitCode == 0, qPrintable(made.err));
        m_checkpoint = m_dir.filePath(QStringLiteral("tiny.d2dpo"));
    }

    void twoLocalProcessesStoreEveryPairOnce()
    {
        const QString one = m_dir.filePath(QStringLiteral("one.db")), two = m_dir.filePath(QStringLiteral("two.db"));
        const CliRun single = runCli({"pairs", "-c", m_checkpoint, "-n", "20", "--seed", "7", "--threads", "1",
                                      "--db", one});
        QVERIFY2(single.exitCode == 0, qPrintable(single.err));
        const CliRun parallel = runCli({"pairs", "-c", m_checkpoint, "-n", "40", "--seed", "7", "--nproc", "2",
                                        "--db", two});
        QVERIFY2(parallel.exitCode == 0, qPrintable(parallel.out + parallel.err));
        QVERIFY2(parallel.out.contains(QStringLiteral("by 2 processes")), qPrintable(parallel.out));
        const PairSet mine = pairsIn(one.toStdString()), ours = pairsIn(two.toStdString());
        // What rank 0 said it stored is what the store holds, none twice, and nothing else wrote.
        QCOMPARE(int(ours.size()), addedIn(parallel.out));
        QVERIFY(noneTwice(ours));
        QVERIFY2(ours.size() > 30, qPrintable(parallel.out)); // an 8-symbol model repeats itself a little
        // Rank 0 keeps the seed: one process's pairs are among them. Rank 1 drew pairs of its own.
        for (const auto& pair : mine)
            QVERIFY2(ours.count(pair) == 1, pair.first.c_str());
        PairSet others;
        for (const auto& pair : ours)
            if (!mine.count(pair))
                others.insert(pair);
        QVERIFY2(others.size() >= 10, qPrintable(parallel.out));
    }

    void torchrunStyleRanksFillATeamStore()
    {
        startTeam();
        const std::string db = teamStore(0);
        const QString url = q(as("max", db));
        const int port = freePort();
        QProcess rank0, rank1;
        const QStringList args = {"pairs", "-c", m_checkpoint, "-n", "30", "--seed", "11", "--threads", "1",
                                  "--db", url};
        startRank(rank0, 0, 2, port, args);
        startRank(rank1, 1, 2, port, args);
        const CliRun first = finishProcess(rank0), second = finishProcess(rank1);
        QVERIFY2(first.exitCode == 0, qPrintable(first.out + first.err));
        QVERIFY2(second.exitCode == 0, qPrintable(second.out + second.err));
        QVERIFY2(second.out.isEmpty(), qPrintable(second.out)); // rank 1 writes nothing, says nothing
        const PairSet stored = pairsIn(url.toStdString());
        QCOMPARE(int(stored.size()), addedIn(first.out));
        QVERIFY(stored.size() > 20);
        QVERIFY(noneTwice(stored));
        for (const CliRun& run : {first, second})
            QVERIFY2(!(run.out + run.err).contains(q(kPassword)), qPrintable(run.out + run.err));
    }

    void aRankThatCannotDrawIsSaidAndTheOthersPairsKept()
    {
        const QString db = m_dir.filePath(QStringLiteral("partial.db"));
        const int port = freePort();
        QProcess rank0, rank1;
        const QStringList common = {"pairs", "-n", "30", "--seed", "5", "--threads", "1", "--db", db, "-c"};
        startRank(rank0, 0, 2, port, common + QStringList{m_checkpoint});
        startRank(rank1, 1, 2, port, common + QStringList{m_dir.filePath(QStringLiteral("missing.d2dpo"))});
        const CliRun first = finishProcess(rank0), second = finishProcess(rank1);
        QCOMPARE(second.exitCode, kExitFailure);
        QCOMPARE(first.exitCode, kExitFailure);
        QVERIFY2(first.err.contains(QStringLiteral("rank 1: ")) && first.err.contains(QStringLiteral("missing.d2dpo")),
                 qPrintable(first.err));
        QVERIFY2(first.err.contains(QStringLiteral("the pairs the other ranks drew are stored")), qPrintable(first.err));
        const PairSet stored = pairsIn(db.toStdString());
        QCOMPARE(int(stored.size()), addedIn(first.out));
        QVERIFY(stored.size() > 10 && stored.size() <= 15);
    }

    void aRankThatNeverComesIsGivenUpAndNothingIsMade()
    {
        const QString db = m_dir.filePath(QStringLiteral("alone.db"));
        QProcess rank0;
        QElapsedTimer timer;
        timer.start();
        startRank(rank0, 0, 2, freePort(),
                  {"pairs", "-c", m_checkpoint, "-n", "10", "--group-timeout", "2", "--threads", "1", "--db", db});
        const CliRun alone = finishProcess(rank0, 60000);
        QCOMPARE(alone.exitCode, kExitFailure);
        QVERIFY2(alone.err.contains(QStringLiteral("d2dpo pairs")), qPrintable(alone.err));
        QVERIFY2(timer.elapsed() < 30000, qPrintable(QString::number(timer.elapsed())));
        QVERIFY(!QFileInfo::exists(db));
        // And --nproc under a launcher's variables would start workers from workers: refused.
        QProcess nested;
        startRank(nested, 0, 2, freePort(), {"pairs", "-c", m_checkpoint, "--nproc", "2", "--db", db});
        const CliRun refused = finishProcess(nested);
        QCOMPARE(refused.exitCode, kExitFailure);
        QVERIFY2(refused.err.contains(QStringLiteral("--nproc starts its own workers")), qPrintable(refused.err));
    }

private:
    QString m_checkpoint; // in the fixture's m_dir
};

QTEST_GUILESS_MAIN(TestParallelPairs)
#include "tst_parallelpairs.moc"
