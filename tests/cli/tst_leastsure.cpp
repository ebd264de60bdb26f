// SPDX-License-Identifier: GPL-3.0-or-later
// Informative pairs first, through the real binary: `pairs --least-sure` (`--surest`) keeps the
// pairs a fine-tuned model is least (most) sure about (its reference found in the store) with their margins,
// `prefs score` and `prefs queue --order least-sure` hand the least sure out first, and
// `labelstudy` runs its grid end to end on a tiny model (the CI-sized version of the README's table).
#include <QDir>
#include <QDirIterator>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <cmath>
#include <csignal>

#include "store/preferencestore.h"
#include "support/clirun.h"

namespace {

using Run = d2dpo::test::CliRun;
using d2dpo::test::runCli;
using d2dpo::test::kCli;
using d2dpo::test::waitForOutput;

/// The number after `label` in `text` ("mean |margin| 0.0123 against 0.0456").
double numberAfter(const QString& text, const QString& label)
{
    const int at = text.indexOf(label);
    if (at < 0)
        return std::nan("");
    return text.mid(at + label.size()).section(QLatin1Char(' '), 0, 0).toDouble();
}

} // namespace

class TestLeastSure final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_reference, m_finetuned, m_other;
    QString path(const QString& name) const { return m_dir.filePath(name); }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_reference = path("ref.d2dpo");
        const Run pretrained = runCli({"pretrain", "--length", "6", "--d-model", "16", "--layers", "1", "--heads", "2",
                                       "--threads", "1", "--eval-samples", "20", "--seed", "4", "--steps", "150", "-o",
                                       m_reference});
        QVERIFY2(pretrained.exitCode == 0, qPrintable(pretrained.err));
        const Run trained = runCli({"train", "-c", m_reference, "--pairs", "500", "--steps", "60", "--lr", "1e-2",
                                    "--eval-every", "0", "--eval-samples", "20", "--threads", "1", "-o",
                                    path("run")});
        QVERIFY2(trained.exitCode == 0, qPrintable(trained.err));
        QDirIterator files(path("run"), {QStringLiteral("*.d2dpo")}, QDir::Files, QDirIterator::Subdirectories);
        while (files.hasNext())
            m_finetuned = files.next();
        QVERIFY2(!m_finetuned.isEmpty(), "the run wrote no checkpoint");
        m_other = path("other.d2dpo"); // a second pretrained model of the same task
        const Run other = runCli({"pretrain", "--length", "6", "--d-model", "16", "--layers", "1", "--heads", "2",
                                  "--threads", "1", "--eval-samples", "20", "--seed", "5", "--steps", "20", "-o",
                                  m_other});
        QVERIFY2(other.exitCode == 0, qPrintable(other.err));
    }

    void pairsLeastSureKeepTheLeastSureWithTheirMargins()
    {
        const QString db = path("pairs.sqlite");
        // The store learns of the reference, so the fine-tuned model's parent is found there.
        QCOMPARE(runCli({"pairs", "-c", m_reference, "-n", "3", "--db", db, "--threads", "1"}).exitCode, 0);
        const Run kept = runCli({"pairs", "-c", m_finetuned, "--least-sure", "-n", "5", "--candidates", "4", "--db", db,
                                 "--threads", "1", "--seed", "2"});
        QVERIFY2(kept.exitCode == 0, qPrintable(kept.err));
        QVERIFY2(kept.out.contains("least sure of"), qPrintable(kept.out));
        const double chosen = numberAfter(kept.out, "mean |margin| "), all = numberAfter(kept.out, "against ");
        QVERIFY2(chosen <= all && all > 0, qPrintable(kept.out)); // the least sure of the candidates, not any
        auto store = d2dpo::PreferenceStore::open(db.toStdString()).value();
        const auto pending = store->pendingPairs(100).value();
        int scored = 0;
        for (const d2dpo::ShownPair& pair : pending)
            if (auto margin = store->pairMargin(pair.id).value()) {
                ++scored;
                QVERIFY(std::abs(margin->first) <= all * 5 + 1e-9);
                QVERIFY(!margin->second.empty());
            }
        QCOMPARE(scored, 5); // the reference's three pairs carry none
        const Run surest = runCli({"pairs", "-c", m_finetuned, "--surest", "-n", "5", "--candidates", "4", "--db", db,
                                   "--threads", "1", "--seed", "2"});
        QVERIFY2(surest.exitCode == 0 && surest.out.contains("surest of"), qPrintable(surest.out + surest.err));
        // The same candidates (same seed): the surest five are farther from 0 than the least sure five.
        QVERIFY2(numberAfter(surest.out, "mean |margin| ") >= chosen, qPrintable(surest.out));
        QVERIFY2(numberAfter(surest.out, "mean |margin| ") >= numberAfter(surest.out, "against "), qPrintable(surest.out));
        const Run both = runCli({"pairs", "-c", m_finetuned, "--surest", "--least-sure", "--db", db});
        QCOMPARE(both.exitCode, d2dpo::test::kExitUsage);
        const Run loose = runCli({"pairs", "-c", m_finetuned, "--candidates", "8", "--db", db});
        QVERIFY2(loose.exitCode != 0 && loose.err.contains("add --least-sure or --surest"), qPrintable(loose.err));
        const Run huge = runCli({"pairs", "-c", m_finetuned, "--least-sure", "-n", "1000000", "--candidates", "1000",
                                 "--db", db});
        QVERIFY2(huge.exitCode != 0 && huge.err.contains("candidate pairs"), qPrintable(huge.err));
        // A pretrained model is sure of nothing: its pairs are stored as drawn, with no margin that
        // would put them ahead of the fine-tuned model's scored ones.
        const Run pretrained = runCli({"pairs", "-c", m_reference, "--least-sure", "-n", "4", "--db", db});
        QVERIFY2(pretrained.exitCode == 0 && pretrained.out.contains("no margins were recorded"),
                 qPrintable(pretrained.out + pretrained.err));
        auto reopened = d2dpo::PreferenceStore::open(db.toStdString()).value();
        int unscored = 0;
        for (const d2dpo::ShownPair& pair : reopened->pendingPairs(100).value())
            unscored += !reopened->pairMargin(pair.id).value().has_value();
        QCOMPARE(unscored, 3 + 4); // the first command's three, and these four
    }

    void theQueueHandsOutTheLeastSureFirstOnceScored()
    {
        const QString db = path("queue.sqlite");
        QCOMPARE(runCli({"pairs", "-c", m_finetuned, "-n", "12", "--db", db, "--threads", "1"}).exitCode, 0);
        const Run ordered = runCli({"prefs", "queue", "--order", "least-sure", "--db", db});
        QVERIFY2(ordered.exitCode == 0 && ordered.out.contains("order least-sure"), qPrintable(ordered.out + ordered.err));
        const Run scored = runCli({"prefs", "score", "-c", m_finetuned, "--reference", m_reference, "--db", db,
                                   "--threads", "1"});
        QVERIFY2(scored.exitCode == 0, qPrintable(scored.err));
        QVERIFY2(scored.out.contains("scored 12 pending pairs"), qPrintable(scored.out));
        auto store = d2dpo::PreferenceStore::open(db.toStdString()).value();
        double previous = 0;
        for (const d2dpo::ShownPair& pair : store->pendingPairs(100, "", "ana").value()) {
            const double margin = std::abs(store->pairMargin(pair.id).value()->first);
            QVERIFY(margin >= previous);
            previous = margin;
        }
        QVERIFY(previous > 0);
        // A pretrained model is its own reference: sure of nothing, it would put every pair first.
        const Run itself = runCli({"prefs", "score", "-c", m_reference, "--db", db, "--threads", "1"});
        QVERIFY2(itself.exitCode == d2dpo::test::kExitFailure && itself.err.contains("is pretrained"),
                 qPrintable(itself.out + itself.err));
        QVERIFY(store->pairMargin(store->pendingPairs(1, "", "ana").value()[0].id).value()); // the scores stay
        // Scored against another model than the one it was fine-tuned from: refused, naming both.
        const Run other = runCli({"prefs", "score", "-c", m_finetuned, "--reference", m_other, "--db", db,
                                  "--threads", "1"});
        QVERIFY2(other.exitCode == d2dpo::test::kExitFailure && other.err.contains("is not the model"),
                 qPrintable(other.err));
        const Run bad = runCli({"prefs", "queue", "--order", "newest", "--db", db});
        QCOMPARE(bad.exitCode, d2dpo::test::kExitUsage);
    }

    void theLabelStudyRunsItsGridAndWritesItsFigures()
    {
        const QString out = path("study");
        const Run run = runCli({"labelstudy", "-c", m_reference, "--seeds", "1", "--labels-per-round", "4",
                                "--candidates", "8", "--max-labels", "8", "--steps", "3", "--eval-samples", "20",
                                "--margin-draws", "4", "-o", out, "--jobs", "1"});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err + run.out));
        QVERIFY2(run.out.contains("| random | ") && run.out.contains("| least-sure | ") && run.out.contains("| surest | "),
                 qPrintable(run.out));
        QFile csv(out + "/rounds.csv");
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(csv.readAll()).trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 1 + 3 * 3); // header, then rounds at 0, 4 and 8 labels of each selection
        QMap<QString, QStringList> byRun;
        for (const QString& line : lines.mid(1)) {
            const QStringList cells = line.split(QLatin1Char(','));
            QCOMPARE(cells.size(), 8);
            QVERIFY(cells[3].toLongLong() <= cells[2].toLongLong()); // decisive <= labels
            byRun[cells[0]].push_back(cells[2]);
            if (cells[2] == QLatin1String("0"))
                byRun[cells[0] + "0"].push_back(cells[4]); // the reference's rule share
        }
        QCOMPARE(byRun["random"], QStringList({"0", "4", "8"}));
        QCOMPARE(byRun["least-sure"], QStringList({"0", "4", "8"}));
        QCOMPARE(byRun["surest"], QStringList({"0", "4", "8"}));
        QCOMPARE(byRun["random0"], byRun["least-sure0"]); // all start from the same measured reference
        QCOMPARE(byRun["random0"], byRun["surest0"]);
        QVERIFY(QFile::exists(out + "/table.md"));
        QVERIFY(QFile::exists(out + "/rule_share.png"));
        // Ctrl-C says what it does: the study's folder is written only at its end, so nothing is.
        QProcess study;
        study.start(kCli, {"labelstudy", "-c", m_reference, "--seeds", "1", "--labels-per-round", "4", "--candidates",
                           "8", "--max-labels", "400", "--steps", "100000", "--eval-samples", "20", "-o",
                           path("stopped-study"), "--jobs", "1", "--threads", "1"});
        QVERIFY(study.waitForStarted());
        QString said;
        waitForOutput(study, QStringLiteral("d2dpo: device"), said);
        ::kill(pid_t(study.processId()), SIGINT);
        const Run stopped = d2dpo::test::finishProcess(study);
        QCOMPARE(stopped.exitCode, 130);
        QVERIFY2((said + stopped.err).contains(QStringLiteral("so nothing is written")), qPrintable(said + stopped.err));
        QVERIFY2(!(said + stopped.err).contains(QStringLiteral("checkpoint is written")), qPrintable(stopped.err));
        QVERIFY(!QFile::exists(path("stopped-study") + "/rounds.csv"));
        const Run unknown = runCli({"labelstudy", "-c", m_reference, "--selections", "random,cleverest"});
        QVERIFY(unknown.exitCode != 0 && unknown.err.contains("unknown selection 'cleverest'"));
        // A folder it cannot write is refused before any work (not after the study, losing it).
        const Run unwritable = runCli({"labelstudy", "-c", m_reference, "-o", "/proc/d2dpo-study"});
        QVERIFY2(unwritable.exitCode != 0 && !unwritable.out.contains("| random |"),
                 qPrintable(unwritable.out + unwritable.err));
        const Run few = runCli({"labelstudy", "-c", m_reference, "--labels-per-round", "8", "--candidates", "4"});
        QVERIFY2(few.exitCode != 0 && few.err.contains("candidate pairs per round"), qPrintable(few.err));
    }
};

QTEST_GUILESS_MAIN(TestLeastSure)
#include "tst_leastsure.moc"
