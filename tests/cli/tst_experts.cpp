// SPDX-License-Identifier: GPL-3.0-or-later
// What the experts think, through the real binary: a blind comparison queued, labelled by a
// simulated expert and reported; overlap and gold pairs set with `prefs queue` and `prefs gold`;
// two simulated labelers (one always right, one always flipping the rule's answer) whose
// agreement report says exactly that; gold pairs never exported for training.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include "store/preferencestore.h"
#include "support/clirun.h"

namespace {

using Run = d2dpo::test::CliRun;
using d2dpo::test::expectRefusal;
using d2dpo::test::runCli;

QJsonObject jsonOf(const Run& run) { return QJsonDocument::fromJson(run.out.toUtf8()).object(); }

} // namespace

class TestExperts final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString path(const QString& name) const { return m_dir.filePath(name); }

    /// A tiny binary-integers model (length 4) pretrained for `steps` steps.
    QString model(const QString& name, int steps)
    {
        const QString file = path(name + ".d2dpo");
        if (!QFile::exists(file)) {
            const Run run = runCli({"pretrain", "--length", "4", "--d-model", "16", "--layers", "1", "--heads", "2",
                                    "--threads", "1", "--eval-samples", "20", "--seed", "4", "--steps",
                                    QString::number(steps), "-o", file});
            if (run.exitCode != 0)
                qWarning("%s", qPrintable(run.err));
        }
        return file;
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void aBlindComparisonIsQueuedLabelledAndReported()
    {
        const QString db = path("compare.sqlite");
        const QString a = model("a", 2), b = model("b", 60);
        const Run queued = runCli({"compare", "-c", a, "-c", b, "-n", "40", "--db", db, "--threads", "1"});
        QVERIFY2(queued.exitCode == 0, qPrintable(queued.err));
        QVERIFY2(queued.out.contains("comparison 1:") && queued.out.contains("models hidden"), qPrintable(queued.out));
        // Nothing to report before any label: the report says so rather than inventing figures.
        const QJsonObject empty = jsonOf(runCli({"compare", "--results", "--json", "--db", db}));
        QCOMPARE(empty["games"].toInt(), 0);
        QVERIFY(empty["models"].toArray()[0].toObject()["win_rate"].isNull());
        const Run labelled = runCli({"label", "--db", db, "--labeler", "judge"});
        QVERIFY2(labelled.exitCode == 0, qPrintable(labelled.err));
        const Run results = runCli({"compare", "--results", "1", "--json", "--db", db});
        QVERIFY2(results.exitCode == 0, qPrintable(results.err));
        const QJsonObject report = jsonOf(results);
        const int pairs = report["pairs"].toInt();
        QVERIFY(pairs > 0 && pairs <= 40);
        QCOMPARE(report["games"].toInt() + report["skips"].toInt(), pairs); // one label per pair
        const QJsonArray models = report["models"].toArray();
        QCOMPARE(models.size(), 2);
        // Two models: the win rates (ties half) add up to 1, and Bradley-Terry's P equals the first's.
        const double first = models[0].toObject()["win_rate"].toDouble(), second = models[1].toObject()["win_rate"].toDouble();
        QVERIFY(std::abs(first + second - 1) < 1e-9);
        const QJsonObject head = report["head_to_head"].toArray()[0].toObject();
        QVERIFY(std::abs(head["p_first_beats_second"].toDouble() - first) < 2e-3);
        const QJsonArray interval = head["p_first_beats_second_95"].toArray();
        QVERIFY(interval[0].toDouble() <= first + 1e-9 && first - 1e-9 <= interval[1].toDouble());
        const Run text = runCli({"compare", "--results", "--db", db});
        QVERIFY2(text.out.contains("beats") && text.out.contains("Bradley-Terry"), qPrintable(text.out));
        QVERIFY(runCli({"compare", "--list", "--db", db}).out.startsWith("1: 2 models of binary-integers:4"));
        // Comparison pairs train nothing.
        const Run exported = runCli({"prefs", "export", "--db", db, "-o", "-"});
        QCOMPARE(exported.out.trimmed(), QString());
    }

    void aComparisonOfThreeModelsQueuesItsPairingsMixed()
    {
        // Runs of one pairing in the queue would tell a labeler which two models a pair compares.
        const QString db = path("three.sqlite");
        const Run queued = runCli({"compare", "-c", model("a", 2), "-c", model("b", 60), "-c", model("c", 20), "-n",
                                   "12", "--db", db, "--threads", "1"});
        QVERIFY2(queued.exitCode == 0, qPrintable(queued.err));
        QCOMPARE(runCli({"label", "--db", db, "--labeler", "judge"}).exitCode, 0);
        auto store = d2dpo::PreferenceStore::open(db.toStdString()).value();
        QStringList pairings; // in queue order (labels are made in it, oldest first)
        for (const d2dpo::JudgedLabel& label : store->judgedLabels(1).value()) {
            QStringList two{QString::fromStdString(label.leftModelId), QString::fromStdString(label.rightModelId)};
            two.sort();
            pairings.push_back(two.join(QLatin1Char('|')));
        }
        QVERIFY(pairings.size() > 20);
        int changes = 0;
        for (int i = 1; i < pairings.size(); ++i)
            changes += pairings[i] != pairings[i - 1];
        QVERIFY2(changes > 6, qPrintable(pairings.join(QLatin1Char(' ')))); // in blocks there would be 2
    }

    void compareRefusesWhatCannotBeCompared()
    {
        const QString db = path("refusals.sqlite");
        expectRefusal({"compare", "-c", model("a", 2), "--db", db}, "two models or more");
        expectRefusal({"compare", "-c", model("a", 2), "-c", model("a", 2), "--db", db}, "named twice");
        expectRefusal({"compare", "--db", path("compare.sqlite"), "--results", "9"}, "no comparison 9");
        expectRefusal({"compare", "--results", "--db", path("none.sqlite")}, "no such store");
    }

    void agreementRecoversAnAlwaysRightAndAnAlwaysWrongLabeler()
    {
        const QString db = path("team.sqlite");
        const QString m = model("b", 60);
        QVERIFY(runCli({"pairs", "-c", m, "-n", "60", "--db", db, "--threads", "1"}).exitCode == 0);
        const Run queue =
            runCli({"prefs", "queue", "--overlap", "2", "--gold-rate", "0.2", "--lease-seconds", "120", "--db", db});
        QVERIFY2(queue.exitCode == 0 && queue.out.contains("overlap 2"), qPrintable(queue.err));
        QVERIFY2(queue.out.contains("lease 120 s"), qPrintable(queue.out));
        const Run gold = runCli({"prefs", "gold", "-c", m, "-n", "10", "--db", db, "--threads", "1", "--seed", "3"});
        QVERIFY2(gold.exitCode == 0 && gold.out.contains("gold pairs"), qPrintable(gold.out + gold.err));
        QVERIFY(runCli({"label", "--db", db, "--labeler", "right"}).exitCode == 0);
        QVERIFY(runCli({"label", "--db", db, "--labeler", "wrong", "--noise", "1"}).exitCode == 0);
        // A third labeler finds nothing left: every pair has its two labels (gold pairs aside).
        const Run third = runCli({"label", "--db", db, "--labeler", "late"});
        QVERIFY2(third.exitCode == 0, qPrintable(third.err));
        const Run agreement = runCli({"prefs", "agreement", "--json", "--db", db, "--resamples", "200"});
        QVERIFY2(agreement.exitCode == 0, qPrintable(agreement.err));
        const QJsonObject report = jsonOf(agreement);
        QVERIFY(report["shared_items"].toInt() > 0);
        const QJsonObject kappa = report["cohen_kappa"].toArray()[0].toObject();
        QVERIFY2(kappa["kappa"].toDouble() < 0, qPrintable(agreement.out)); // flipped answers disagree
        for (const QJsonValue v : report["labelers"].toArray()) {
            const QJsonObject l = v.toObject();
            if (l["labeler"] == "right")
                QCOMPARE(l["gold_accuracy"].toDouble(), 1.0);
            else if (l["labeler"] == "wrong")
                QCOMPARE(l["gold_accuracy"].toDouble(), 0.0);
            QVERIFY(l["gold_judged"].toInt() > 0 || l["labeler"] == "late");
        }
        // Only training pairs' labels are exported: neither the gold labels nor anything else.
        const Run exported = runCli({"prefs", "export", "--db", db, "-o", "-"});
        const int lines = int(exported.out.count(QLatin1Char('\n')));
        const Run text = runCli({"prefs", "agreement", "--db", db, "--resamples", "200"});
        QVERIFY2(text.out.contains("Krippendorff's alpha") && text.out.contains("right / wrong"), qPrintable(text.out));
        QVERIFY(lines > 0 && lines <= 120);
        expectRefusal({"prefs", "gold", "--mark", "1", "--answer", "left", "--db", db}, "has labels already");
        expectRefusal({"prefs", "queue", "--overlap", "0", "--db", db}, "--overlap");
        expectRefusal({"prefs", "queue", "--lease-seconds", "90000", "--db", db}, "--lease-seconds");
    }
};

QTEST_GUILESS_MAIN(TestExperts)
#include "tst_experts.moc"
