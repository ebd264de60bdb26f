// SPDX-License-Identifier: GPL-3.0-or-later
// The d2dpo binary as a user runs it: a tiny `reproduce` end to end (its fine-tuned odd ratio
// must beat the reference's), the other subcommands on its outputs, and bad input of every kind
// ending in a clear message and a non-zero exit code.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <optional>

#include "support/clirun.h"

#include "store/preferencestore.h"

namespace {

using Run = d2dpo::test::CliRun;
using d2dpo::test::expectRefusal;
using d2dpo::test::runCli;

/// The tiny `reproduce` run and the checkpoints it left (empty paths when it failed).
struct Reproduced {
    QString folder;
    Run run;
    QString reference;
    QString finetuned;
};

} // namespace

class TestCli final : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::optional<Reproduced> m_reproduced;

    QString path(const QString& name) const { return m_dir.filePath(name); }

    /// The tiny `reproduce` whose checkpoints the other cases use: run once per executable, by
    /// whichever case needs it first, so that any case can run alone.
    const Reproduced& reproduced()
    {
        if (!m_reproduced) {
            Reproduced r;
            r.folder = path("reproduce");
            r.run = runCli({"reproduce", "--length", "6", "--d-model", "32", "--layers", "1", "--heads", "2",
                            "--pretrain-steps", "500", "--steps", "80", "--lr", "1e-3", "--beta", "0.1",
                            "--eval-every", "40", "--eval-samples", "600", "--sampling-steps", "32",
                            "--pairs", "2000", "--seed", "1", "--out", r.folder});
            QFile reportFile(r.folder + "/report.json");
            if (reportFile.open(QIODevice::ReadOnly)) {
                const QJsonObject checkpoints =
                    QJsonDocument::fromJson(reportFile.readAll()).object()["checkpoints"].toObject();
                r.reference = checkpoints["reference"].toString();
                r.finetuned = checkpoints["finetuned"].toString();
            }
            m_reproduced = r;
        }
        return *m_reproduced;
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void everySubcommandAnswersHelpWithTheCommonOptions()
    {
        const Run top = runCli({"--help"});
        QCOMPARE(top.exitCode, 0);
        for (const char* command : {"pretrain", "sample", "eval", "train", "export", "reproduce", "bench", "pairs"}) {
            QVERIFY2(top.out.contains(command), command);
            const Run run = runCli({command, "--help"});
            QCOMPARE(run.exitCode, 0);
            QVERIFY2(run.out.contains("--seed") && run.out.contains("--device") && run.out.contains("--threads"),
                     command);
        }
    }

    void tinyReproduceBeatsTheReference()
    {
        const Reproduced& reproduce = reproduced();
        const QString out = reproduce.folder;
        const Run& run = reproduce.run;
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        QVERIFY(run.out.contains("vsr") && run.out.contains("odd_ratio >= 0.95"));
        QVERIFY(run.out.contains("wall time"));

        QFile reportFile(out + "/report.json");
        QVERIFY(reportFile.open(QIODevice::ReadOnly));
        const QJsonObject report = QJsonDocument::fromJson(reportFile.readAll()).object();
        const double referenceOdd = report["reference"].toObject()["odd_ratio"].toDouble();
        const double finetunedOdd = report["finetuned"].toObject()["odd_ratio"].toDouble();
        QVERIFY2(finetunedOdd > referenceOdd + 0.15,
                 qPrintable(QString("odd ratio %1 -> %2").arg(referenceOdd).arg(finetunedOdd)));
        QCOMPARE(report["curves"].toObject()["evaluations"].toArray().size(), 3); // steps 0, 40, 80
        QCOMPARE(report["curves"].toObject()["d2dpo"].toArray().size(), 80);
        for (const char* name : {"pretrain.csv", "d2dpo.csv", "evaluations.csv"})
            QVERIFY2(QFile::exists(out + "/" + name), name);

        QVERIFY(QFile::exists(reproduce.reference));
        QVERIFY(QFile::exists(reproduce.finetuned));

        // Reusing a non-empty output folder is refused: earlier results are never overwritten.
        expectRefusal({"reproduce", "--out", out, "--pretrain-steps", "1"}, "not empty");
    }

    void evalSampleExportAndTrainWorkOnTheReproducedCheckpoints()
    {
        const Reproduced& reproduce = reproduced();
        QVERIFY2(QFile::exists(reproduce.reference) && QFile::exists(reproduce.finetuned),
                 qPrintable("the tiny reproduce failed: " + reproduce.run.err));
        const QString& reference = reproduce.reference;
        const QString& finetuned = reproduce.finetuned;
        const Run eval = runCli({"eval", "-c", finetuned, "-n", "200", "--sampling-steps", "16", "--json"});
        QVERIFY2(eval.exitCode == 0, qPrintable(eval.err));
        QVERIFY(QJsonDocument::fromJson(eval.out.toUtf8()).object().contains("vsr"));

        const Run sample = runCli({"sample", "-c", finetuned, "-n", "5", "--sampling-steps", "16"});
        QVERIFY2(sample.exitCode == 0, qPrintable(sample.err));
        QCOMPARE(sample.out.split('\n', Qt::SkipEmptyParts).size(), 5);

        const QString exported = path("export");
        const Run exportRun = runCli({"export", "-c", finetuned, "-o", exported, "-n", "10"});
        QVERIFY2(exportRun.exitCode == 0, qPrintable(exportRun.err));
        for (const char* name : {"weights.pt", "model_card.json", "samples.txt"})
            QVERIFY2(QFile::exists(exported + "/" + name), name);
        QVERIFY2(exportRun.out.contains("drawing 10 samples, "), qPrintable(exportRun.out));
        // Samples sized to a time: said before the draw, the model's files written first.
        const Run fitted = runCli({"export", "-c", finetuned, "-o", path("export-fitted"), "-n", "40",
                                   "--samples-within", "60"});
        QVERIFY2(fitted.exitCode == 0, qPrintable(fitted.err));
        QVERIFY2(fitted.out.contains("the model's files are written; drawing 40 samples (about"), qPrintable(fitted.out));
        const Run none = runCli({"export", "-c", finetuned, "-o", path("export-none"), "-n", "0"});
        QVERIFY2(none.exitCode == 0, qPrintable(none.err));
        QVERIFY(QFile::exists(path("export-none") + "/weights.pt"));
        QVERIFY(!QFile::exists(path("export-none") + "/samples.txt"));
        QCOMPARE(runCli({"export", "-c", finetuned, "-o", path("export-bad"), "--samples-within", "-1"}).exitCode != 0, true);

        const Run train = runCli({"train", "-c", reference, "-o", path("train"), "--steps", "5", "--batch", "8",
                                 "--eval-samples", "50", "--sampling-steps", "8", "--pairs", "100"});
        QVERIFY2(train.exitCode == 0, qPrintable(train.err));
        QVERIFY(train.out.contains("fine-tuned checkpoint"));
    }

    void theStoreCommandsCarryLabelsToTrainingAndRefuseBadStores()
    {
        const Reproduced& reproduce = reproduced();
        QVERIFY2(QFile::exists(reproduce.reference), qPrintable("the tiny reproduce failed: " + reproduce.run.err));
        const QString& reference = reproduce.reference;
        for (const char* command : {"label", "prefs"})
            QCOMPARE(runCli({command, "--help"}).exitCode, 0);
        const QString db = path("store.sqlite");
        const Run pairs = runCli({"pairs", "--db", db, "-c", reference, "-n", "40", "--sampling-steps", "16"});
        QVERIFY2(pairs.exitCode == 0, qPrintable(pairs.err));
        QVERIFY(pairs.out.contains("added"));
        const Run label = runCli({"label", "--db", db, "--rule", "odd"});
        QVERIFY2(label.exitCode == 0, qPrintable(label.err));
        QVERIFY(label.out.contains("labelled"));
        const QString jsonl = path("prefs.jsonl");
        const Run exported = runCli({"prefs", "export", "--db", db, "-o", jsonl});
        QVERIFY2(exported.exitCode == 0, qPrintable(exported.err));
        QFile file(jsonl);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = file.readAll().split('\n');
        QVERIFY(lines.size() > 2);
        const QJsonObject first = QJsonDocument::fromJson(lines.first()).object();
        QVERIFY(first.contains("chosen") && first.contains("rejected") && first.contains("labeler"));
        const Run imported = runCli({"prefs", "import", "--db", path("other.sqlite"), "-i", jsonl, "--length", "6"});
        QVERIFY2(imported.exitCode == 0, qPrintable(imported.err));
        const Run train = runCli({"train", "--db", db, "-c", reference, "-o", path("train-db"), "--steps", "4",
                                 "--batch", "8", "--eval-samples", "50", "--sampling-steps", "8"});
        QVERIFY2(train.exitCode == 0, qPrintable(train.err));
        QVERIFY(train.err.contains("labelled pairs from"));

        // Bad stores and files: a clear message, a non-zero exit, nothing imported.
        QFile junk(path("junk.sqlite"));
        QVERIFY(junk.open(QIODevice::WriteOnly));
        junk.write("definitely not sqlite");
        junk.close();
        expectRefusal({"label", "--db", path("junk.sqlite"), "--rule", "odd"}, "not an SQLite database");
        expectRefusal({"prefs", "import", "--db", db, "-i", path("missing.jsonl"), "--length", "6"}, "does not exist");
        expectRefusal({"prefs", "import", "--db", db, "-i", reference, "--length", "6"}, "line 1");
        expectRefusal({"prefs", "import", "--db", db, "-i", jsonl}, "name the sequences' task");
        // A store that does not exist is never created by a command that needs its labels.
        expectRefusal({"train", "--db", path("none.sqlite"), "-c", reference, "-o", path("t2")}, "no such store");
        expectRefusal({"prefs", "export", "--db", path("nofolder/none.sqlite"), "-o", path("x.jsonl")},
                      "no such store");
        QVERIFY(!QFile::exists(path("none.sqlite")) && !QFile::exists(path("nofolder")));
        QVERIFY(d2dpo::PreferenceStore::open(path("empty.sqlite").toStdString()).ok());
        expectRefusal({"train", "--db", path("empty.sqlite"), "-c", reference, "-o", path("t2")},
                      "no decisive labels");
    }

    void exportedWeightsLoadInPython()
    {
        QProcess probe;
        probe.start("/usr/bin/python3", {"-c", "import torch"});
        if (!probe.waitForFinished(60000) || probe.exitStatus() != QProcess::NormalExit || probe.exitCode() != 0)
            QSKIP("/usr/bin/python3 with torch (Debian's python3-torch) is not installed");
        const Reproduced& reproduce = reproduced();
        QVERIFY2(QFile::exists(reproduce.finetuned), qPrintable("the tiny reproduce failed: " + reproduce.run.err));
        const QString& finetuned = reproduce.finetuned;
        const QString folder = path("export-python");
        QVERIFY(runCli({"export", "-c", finetuned, "-o", folder, "-n", "5"}).exitCode == 0);
        const QString script = QStringLiteral(
            "import json, torch\n"
            "w = torch.load('%1/weights.pt', weights_only=True)\n"
            "card = json.load(open('%1/model_card.json'))\n"
            "shapes = card['weights']['shapes']\n"
            "assert isinstance(w, dict) and set(w) == set(shapes), (sorted(w), sorted(shapes))\n"
            "assert all(list(w[k].shape) == shapes[k] for k in w)\n"
            "assert sum(v.numel() for k, v in w.items() if k != 'position_ids') == card['weights']['parameter_count']\n"
            "print('ok', len(w))\n").arg(folder);
        QProcess python;
        python.start("/usr/bin/python3", {"-c", script});
        QVERIFY(python.waitForFinished(120000));
        QVERIFY2(python.exitCode() == 0, python.readAllStandardError().constData());
        QVERIFY(python.readAllStandardOutput().startsWith("ok"));
    }

    void badInputGivesAClearMessage()
    {
        expectRefusal({"no-such-command"}, "");
        // Each numeric option is checked with a message naming it and its range.
        expectRefusal({"reproduce", "--beta", "0", "--out", path("x1")}, "--beta: must be a finite number > 0");
        expectRefusal({"reproduce", "--beta", "inf", "--out", path("x1")}, "--beta: must be a finite number > 0");
        expectRefusal({"reproduce", "--beta", "nan", "--out", path("x1")}, "--beta: must be a finite number > 0");
        expectRefusal({"reproduce", "--lr", "-1", "--out", path("x2")}, "--lr: must be a finite number > 0");
        expectRefusal({"reproduce", "--length", "1", "--out", path("x3")}, "--length: Value 1 not in range"); // CLI11 2.3 says "2 to 512", 2.4 "[2 - 512]"
        expectRefusal({"reproduce", "--heads", "3", "--out", path("x4")}, "heads");
        expectRefusal({"reproduce", "--steps", "0", "--out", path("x5")}, "--steps: must be a whole number >= 1");
        expectRefusal({"sample", "-c", "x", "--seed", "-1"}, "--seed: Value -1 not in range");
        expectRefusal({"sample", "-c", "x", "--seed", "99999999999999999999"}, "--seed");
        expectRefusal({"sample", "-c", "x", "--seed", "9223372036854775808"}, "not in range");
        expectRefusal({"label", "--limit", "-5"}, "--limit: must be a whole number >= 1 (got -5)");
        expectRefusal({"pairs", "-c", "x", "--count", "0"}, "--count");
        expectRefusal({"prefs", "import", "-i", "x", "--length", "-1"}, "--length");
        expectRefusal({"train", "-c", "x", "-o", path("x7"), "--batch", "0"}, "--batch: must be a whole number >= 1");
        expectRefusal({"train", "-c", "x", "-o", path("x7"), "--eval-every", "-1"}, "--eval-every");
        expectRefusal({"train", "-c", "x", "-o", path("x7"), "--precision", "half"}, "--precision: half not in {float32,bf16}");
        expectRefusal({"reproduce", "--device", "tpu", "--out", path("x6")}, "unknown device");
        expectRefusal({"reproduce", "--threads", "-2"}, "threads");
        expectRefusal({"eval", "-c", path("missing.d2dpo")}, "cannot open");
        expectRefusal({"eval"}, "--checkpoint is required");

        QFile foreign(path("foreign.d2dpo"));
        QVERIFY(foreign.open(QIODevice::WriteOnly));
        foreign.write("not a checkpoint");
        foreign.close();
        expectRefusal({"sample", "-c", path("foreign.d2dpo")}, "not a d2dpo checkpoint");

        // A corrupt checkpoint, and an export into a folder that holds something already.
        const Reproduced& reproduce = reproduced();
        QVERIFY2(QFile::exists(reproduce.reference), qPrintable("the tiny reproduce failed: " + reproduce.run.err));
        const QString& reference = reproduce.reference;
        QFile original(reference);
        QVERIFY(original.open(QIODevice::ReadOnly));
        QByteArray bytes = original.readAll();
        bytes[bytes.size() / 2] = char(bytes[bytes.size() / 2] ^ 0x33);
        QFile corrupt(path("corrupt.d2dpo"));
        QVERIFY(corrupt.open(QIODevice::WriteOnly));
        corrupt.write(bytes);
        corrupt.close();
        expectRefusal({"train", "-c", path("corrupt.d2dpo"), "-o", path("t")}, "corrupt");
        QVERIFY(QDir().mkpath(path("occupied")));
        QFile occupant(path("occupied/earlier.txt"));
        QVERIFY(occupant.open(QIODevice::WriteOnly));
        occupant.close();
        expectRefusal({"export", "-c", reference, "-o", path("occupied")}, "not empty");
    }

    void trainingOnRuleLabelsRaisesTheRuleShareOfAWordListModel()
    {
        // A tiny word list: pretrain on it, draw pairs, label them with a rule, train on the labels,
        // and the rule's share rises.
        QFile words(path("words.txt"));
        QVERIFY(words.open(QIODevice::WriteOnly));
        const char* list[] = {"cat", "dog", "emu", "owl", "ant", "yak", "eel", "pig", "cow", "fox", "ape", "elk",
                              "hen", "bat", "asp", "rat", "ibis", "orca", "bee", "gnu"};
        for (int repeat = 0; repeat < 3; ++repeat)
            for (const char* w : list)
                words.write(QByteArray(w) + "\n");
        words.close();
        const QString reference = path("words.d2dpo");
        const Run pretrain = runCli({"pretrain", "--data", path("words.txt"), "--valid", "in-data", "--rule",
                                    "motif:^[aeiou]", "--d-model", "32", "--layers", "1", "--heads", "2", "--steps",
                                    "400", "--eval-samples", "300", "--sampling-steps", "16", "--seed", "2", "-o",
                                    reference});
        QVERIFY2(pretrain.exitCode == 0, qPrintable(pretrain.err));
        QVERIFY2(pretrain.err.contains("60 sequences (lines), 20 distinct, 40 duplicates"), qPrintable(pretrain.err));
        QVERIFY2(pretrain.out.contains("rule_share"), qPrintable(pretrain.out));

        const QString db = path("words.sqlite");
        const Run pairs = runCli({"pairs", "--db", db, "-c", reference, "-n", "200", "--sampling-steps", "16"});
        QVERIFY2(pairs.exitCode == 0, qPrintable(pairs.err));
        const Run label = runCli({"label", "--db", db, "--rule", "motif:^[aeiou]"});
        QVERIFY2(label.exitCode == 0 && label.out.contains("motif:^[aeiou]"), qPrintable(label.out + label.err));
        // Without --rule, the task's own rule: nothing is left to label, and nothing fails.
        const Run again = runCli({"label", "--db", db});
        QVERIFY2(again.exitCode == 0 && again.out.contains("labelled 0 pairs"), qPrintable(again.out + again.err));
        // 100 steps: with the exact sampler's pairs 60 moved the share by 0.095 on this seed, 100 by 0.27.
        const Run train = runCli({"train", "--db", db, "-c", reference, "-o", path("words-train"), "--steps", "100",
                                 "--batch", "32", "--lr", "1e-3", "--eval-every", "0", "--eval-samples", "300",
                                 "--sampling-steps", "16", "--evaluate-reference"});
        QVERIFY2(train.exitCode == 0, qPrintable(train.err));
        const QString finetuned = train.out.section("fine-tuned checkpoint: ", 1).trimmed();
        const auto ruleShare = [&](const QString& checkpoint) {
            const Run eval = runCli({"eval", "-c", checkpoint, "-n", "600", "--sampling-steps", "16", "--json"});
            return QJsonDocument::fromJson(eval.out.toUtf8()).object()["rule_share"].toDouble(-1);
        };
        const double before = ruleShare(reference), after = ruleShare(finetuned);
        QVERIFY2(before >= 0 && after > before + 0.1, qPrintable(QString("rule share %1 -> %2").arg(before).arg(after)));
        const Run sample = runCli({"sample", "-c", finetuned, "-n", "3", "--sampling-steps", "16"});
        QVERIFY2(sample.exitCode == 0 && sample.out.contains("length"), qPrintable(sample.out + sample.err));

        // Another task's checkpoint on this store: its labels are left out, and said so.
        const Reproduced& reproduce = reproduced();
        QVERIFY2(QFile::exists(reproduce.reference), qPrintable("the tiny reproduce failed: " + reproduce.run.err));
        const QString& otherTask = reproduce.reference;
        const Run other = runCli({"train", "--db", db, "-c", otherTask, "-o", path("other-task"), "--steps", "2"});
        QVERIFY(other.exitCode != 0);
        QVERIFY2(other.err.contains("of other tasks") && other.err.contains("no decisive labels"),
                 qPrintable(other.err));
        expectRefusal({"pretrain", "--data", path("missing.txt"), "-o", path("x.d2dpo")}, "does not exist");
        expectRefusal({"pretrain", "--data", path("words.txt"), "--rule", "motif:(", "-o", path("x.d2dpo")},
                      "not a valid regular expression");
    }

    void aPretrainingSnapshotIsTheModelOfAShorterPretraining()
    {
        // The words table in the README rests on this: the snapshot after step k of a long
        // pretraining is what a k-step pretraining writes (constant learning rate, per-step data).
        const QStringList common{"pretrain", "--d-model", "16", "--layers", "1", "--heads", "2", "--threads", "1",
                                 "--eval-samples", "20", "--seed", "4"};
        const Run longer = runCli(common + QStringList{"--steps", "6", "--snapshot-every", "2", "-o", path("long.d2dpo")});
        QVERIFY2(longer.exitCode == 0, qPrintable(longer.err));
        QVERIFY2(longer.out.contains("snapshot " + path("long.step2.d2dpo")) &&
                     longer.out.contains("snapshot " + path("long.step4.d2dpo")),
                 qPrintable(longer.out));
        QVERIFY(!QFile::exists(path("long.step6.d2dpo"))); // the last step is the output itself
        const Run shorter = runCli(common + QStringList{"--steps", "4", "-o", path("short.d2dpo")});
        QVERIFY2(shorter.exitCode == 0, qPrintable(shorter.err));
        const auto samples = [&](const QString& checkpoint) {
            return runCli({"sample", "-c", checkpoint, "-n", "40", "--seed", "9", "--threads", "1"}).out;
        };
        QCOMPARE(samples(path("long.step4.d2dpo")), samples(path("short.d2dpo")));
        QVERIFY(samples(path("long.step4.d2dpo")) != samples(path("long.d2dpo")));
        const Run eval = runCli({"eval", "-c", path("long.step2.d2dpo"), "-n", "50", "--json"});
        QVERIFY2(eval.exitCode == 0 && eval.out.contains("odd_ratio"), qPrintable(eval.out + eval.err));

        // A snapshot that cannot be written is refused before the first step.
        QVERIFY(QDir().mkpath(path("taken.step2.d2dpo")));
        expectRefusal(common + QStringList{"--steps", "6", "--snapshot-every", "2", "-o", path("taken.d2dpo")},
                      "snapshot");
        QVERIFY(!QFile::exists(path("taken.d2dpo")));
    }

    void cudaRequestWithoutCudaIsExplained()
    {
        const Run run = runCli({"sample", "-c", path("whatever.d2dpo"), "--device", "cuda"});
        if (run.err.contains("cannot open"))
            QSKIP("CUDA is available here");
        QVERIFY(run.exitCode != 0);
        QVERIFY2(run.err.contains("CUDA is not available"), qPrintable(run.err));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
