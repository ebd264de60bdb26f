// SPDX-License-Identifier: GPL-3.0-or-later
// Bring your own model, end to end against models made by Python's torch in the test: the two
// example architectures of python/examples (a DiT with adaLN and rotary embeddings, an
// nn.TransformerEncoder framed by <cls>/<eos> with the mask id among the symbols) are pretrained
// briefly on the paper's binary integers, imported, compared with Python's logits, sampled,
// aligned with D2-DPO toward the odd rule, exported, and the export run again in Python. Then
// every bad input an import must refuse, with its message and nothing written. A model imported
// without data is labelled on its own samples and aligned from the store.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <torch/torch.h>

#include "io/checkpoint.h"
#include "support/clirun.h"

namespace {

using Run = d2dpo::test::CliRun;
using d2dpo::test::expectRefusal;
using d2dpo::test::kExitFailure;
using d2dpo::test::runCli;

const QString kPython = QStringLiteral("/usr/bin/python3");
const QString kWrap = QStringLiteral(D2DPO_SOURCE_DIR "/python/d2dpo_wrap.py");

Run runPython(const QStringList& arguments)
{
    QProcess process;
    process.start(kPython, arguments);
    return d2dpo::test::finishProcess(process);
}

QJsonObject readJson(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

/// The largest |difference| between Python's task logits (from `d2dpo_wrap.py logits`) and the
/// C++ model's on the same tokens and times.
double largestLogitGap(const QString& pythonJson, const QString& checkpoint)
{
    const QJsonObject python = readJson(pythonJson);
    const QJsonArray rows = python["tokens"].toArray();
    std::vector<int64_t> tokens;
    for (const auto& row : rows)
        for (const auto& token : row.toArray())
            tokens.push_back(token.toInteger());
    std::vector<float> times;
    for (const auto& t : python["t"].toArray())
        times.push_back(float(t.toDouble()));
    auto loaded = d2dpo::loadCheckpoint(checkpoint.toStdString(), torch::kCPU);
    if (!loaded)
        return 1e9;
    d2dpo::Denoiser model = loaded->model;
    model->eval();
    torch::NoGradGuard noGrad;
    const auto ours = model->forward(torch::tensor(tokens).view({rows.size(), -1}), torch::tensor(times))
                          .to(torch::kDouble)
                          .flatten();
    const QJsonArray theirs = python["logits"].toArray();
    if (ours.numel() != theirs.size())
        return 1e9;
    double gap = 0;
    for (int64_t i = 0; i < ours.numel(); ++i)
        gap = std::max(gap, std::abs(ours[i].item<double>() - theirs[int(i)].toDouble()));
    return gap;
}

double metric(const QString& evalJson, const char* name)
{
    return QJsonDocument::fromJson(evalJson.toUtf8()).object()[QLatin1String(name)].toDouble(-1);
}

} // namespace

class TestImport final : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString path(const QString& name) const { return m_dir.filePath(name); }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        if (runPython({QStringLiteral("-c"), QStringLiteral("import torch")}).exitCode != 0)
            QSKIP("/usr/bin/python3 with torch (Debian's python3-torch) is not installed");
        for (const char* architecture : {"dit", "encoder"}) {
            const Run made = runPython({kWrap, QStringLiteral("example"), QLatin1String(architecture),
                                        QStringLiteral("--binary-integers"), QStringLiteral("16"),
                                        QStringLiteral("--steps"), QStringLiteral("300"), QStringLiteral("-o"),
                                        path(QLatin1String(architecture) + QStringLiteral(".pt"))});
            QVERIFY2(made.exitCode == 0, qPrintable(made.err));
        }
        const Run bad = runPython({QStringLiteral(D2DPO_SOURCE_DIR "/tests/python/make_bad_inputs.py"), path("bad")});
        QVERIFY2(bad.exitCode == 0, qPrintable(bad.err));
    }

    void aModelBroughtInIsAlignedAndGoesBackToPython_data()
    {
        QTest::addColumn<QString>("architecture");
        QTest::newRow("DiT: adaLN, rotary, sigma") << QStringLiteral("dit");
        QTest::newRow("nn.TransformerEncoder: <cls>/<eos>, mask among symbols") << QStringLiteral("encoder");
    }

    void aModelBroughtInIsAlignedAndGoesBackToPython()
    {
        QFETCH(QString, architecture);
        const QString model = path(architecture + ".pt"), vocabulary = path(architecture + ".vocab.json");
        const QString imported = path(architecture + ".d2dpo");
        const Run import = runCli({"import", "--torchscript", model, "--vocabulary", vocabulary, "--task",
                                   "binary-integers", "--rule", "odd", "--eval-samples", "500", "-o", imported});
        QVERIFY2(import.exitCode == 0, qPrintable(import.err));
        QVERIFY2(import.out.contains("logits over"), qPrintable(import.out));

        // The same logits as Python's on fixed inputs.
        const QString before = path(architecture + "-python.json");
        const Run logits = runPython({kWrap, "logits", "--model", model, "--vocabulary", vocabulary, "--length", "16",
                                      "-o", before});
        QVERIFY2(logits.exitCode == 0, qPrintable(logits.err));
        const double importGap = largestLogitGap(before, imported);
        qInfo("%s: largest logit difference to Python after import: %.3g", qPrintable(architecture), importGap);
        QVERIFY2(importGap <= 1e-5, qPrintable(QString::number(importGap)));

        const Run sample = runCli({"sample", "-c", imported, "-n", "5"});
        QVERIFY2(sample.exitCode == 0, qPrintable(sample.err));
        QCOMPARE(sample.out.split('\n', Qt::SkipEmptyParts).size(), 5);

        // D2-DPO toward odd integers: the odd ratio rises past 0.9.
        const Run referenceEval = runCli({"eval", "-c", imported, "-n", "1000", "--json"});
        QVERIFY2(referenceEval.exitCode == 0, qPrintable(referenceEval.err));
        const double oddBefore = metric(referenceEval.out, "odd_ratio");
        const QString run = path(architecture + "-run");
        const Run train = runCli({"train", "-c", imported, "-o", run, "--steps", "400", "--lr", "3e-4",
                                  "--eval-every", "0", "--eval-samples", "200", "--threads", "1"});
        QVERIFY2(train.exitCode == 0, qPrintable(train.err));
        const QString marker = QStringLiteral("fine-tuned checkpoint: ");
        const QString tuned = train.out.mid(train.out.indexOf(marker) + marker.size()).section('\n', 0, 0).trimmed();
        QVERIFY2(QFile::exists(tuned), qPrintable(train.out));
        const Run tunedEval = runCli({"eval", "-c", tuned, "-n", "1000", "--json"});
        QVERIFY2(tunedEval.exitCode == 0, qPrintable(tunedEval.err));
        const double oddAfter = metric(tunedEval.out, "odd_ratio");
        qInfo("%s: odd ratio %.3f before, %.3f after D2-DPO (VSR %.3f)", qPrintable(architecture), oddBefore, oddAfter,
              metric(tunedEval.out, "vsr"));
        QVERIFY2(oddAfter > 0.9, qPrintable(tunedEval.out));

        // Export: model.pt runs in Python with the C++ model's logits.
        const QString exported = path(architecture + "-export");
        const Run exportRun = runCli({"export", "-c", tuned, "-o", exported, "-n", "10"});
        QVERIFY2(exportRun.exitCode == 0, qPrintable(exportRun.err));
        for (const char* name : {"model.pt", "vocabulary.json", "weights.pt", "model_card.json", "samples.txt"})
            QVERIFY2(QFile::exists(exported + "/" + name), name);
        const QString after = path(architecture + "-export.json");
        const Run exportedLogits = runPython({kWrap, "logits", "--model", exported + "/model.pt", "--vocabulary",
                                              exported + "/vocabulary.json", "--length", "16", "-o", after});
        QVERIFY2(exportedLogits.exitCode == 0, qPrintable(exportedLogits.err));
        const double exportGap = largestLogitGap(after, tuned);
        qInfo("%s: largest logit difference to Python's torch.jit.load of the export: %.3g", qPrintable(architecture),
              exportGap);
        QVERIFY2(exportGap <= 1e-5, qPrintable(QString::number(exportGap)));
        // The export is the fine-tuned model, not the one that came in.
        QVERIFY(largestLogitGap(before, tuned) > 1e-3);
    }

    void badInputIsRefusedAndNothingIsWritten_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("vocabulary");
        QTest::addColumn<QString>("phrase");
        QTest::newRow("torch.save state dict") << "state-dict" << "tiny" << "a torch.save file";
        QTest::newRow("legacy pickle") << "legacy-pickle" << "tiny" << "pickles can run code and are never read";
        QTest::newRow("forward without t") << "one-argument" << "tiny" << "forward(self, tokens: Tensor, t: Tensor)";
        QTest::newRow("wrong output shape") << "wrong-shape" << "tiny" << "it must return [B, L, V] logits";
        QTest::newRow("not finite") << "not-finite" << "tiny" << "not finite (NaN or infinite) at t = 0";
        QTest::newRow("forward throws") << "throws" << "tiny" << "only runs on sequences of length 0";
        QTest::newRow("id out of range") << "tiny" << "out-of-range" << "names id 7, outside the model's 3 logits";
        QTest::newRow("no mask") << "tiny" << "no-mask" << "no mask id";
        QTest::newRow("mask twice") << "tiny" << "twice-mask" << "the key \"mask\" appears twice";
        QTest::newRow("symbols collide") << "tiny" << "collide" << "ids collide: symbol '0' and symbol '1'";
        QTest::newRow("mask is a symbol") << "tiny" << "mask-is-symbol" << "ids collide: symbol '1' and the mask";
        QTest::newRow("symbol of two characters") << "tiny" << "long-symbol" << "is not one character";
        QTest::newRow("a vocabulary as the model") << "tiny.vocab.json" << "tiny" << "not a TorchScript archive";
    }

    void badInputIsRefusedAndNothingIsWritten()
    {
        QFETCH(QString, model);
        QFETCH(QString, vocabulary);
        QFETCH(QString, phrase);
        const QString modelPath = path("bad/" + (model.contains('.') ? model : model + ".pt"));
        const QString out = path("bad/refused.d2dpo");
        expectRefusal({"import", "--torchscript", modelPath, "--vocabulary", path("bad/" + vocabulary + ".vocab.json"),
                       "--task", "binary-integers", "--eval-samples", "0", "-o", out},
                      phrase, kExitFailure);
        QVERIFY(!QFile::exists(out));
    }

    void aModelTooLargeForTheMemoryIsRefusedBeforeItIsRead()
    {
        // A sparse file: its size says 1 TiB, no disk is used and nothing is read.
        const QString huge = path("bad/huge.pt");
        QFile file(huge);
        QVERIFY(file.open(QIODevice::WriteOnly));
        QVERIFY(file.resize(qint64(1) << 40));
        file.close();
        const QString out = path("bad/huge.d2dpo");
        expectRefusal({"import", "--torchscript", huge, "--vocabulary", path("bad/tiny.vocab.json"), "--task",
                       "binary-integers", "-o", out},
                      "to train", kExitFailure);
        QVERIFY(!QFile::exists(out));
        QFile::remove(huge);
    }

    void aModelImportedWithoutDataIsLabelledAndAligned()
    {
        // No training sequences: the task is the vocabulary's symbols at the lengths given. The
        // model's own samples are labelled by a rule (a last bit of 1) and D2-DPO raises its share.
        const QString imported = path("nodata.d2dpo"), db = path("nodata.sqlite");
        const Run import = runCli({"import", "--torchscript", path("dit.pt"), "--vocabulary", path("dit.vocab.json"),
                                   "--max-length", "16", "--rule", "motif:1$", "--eval-samples", "200", "-o", imported});
        QVERIFY2(import.exitCode == 0, qPrintable(import.err));
        const auto ruleShare = [&](const QString& checkpoint) {
            const Run eval = runCli({"eval", "-c", checkpoint, "-n", "1000", "--json"});
            // No data to be in: a share of real sequences would be a made-up figure (-2 fails below).
            return eval.out.contains("in_data_share") ? -2.0 : metric(eval.out, "rule_share");
        };
        const double before = ruleShare(imported);
        QVERIFY2(before >= 0, qPrintable(QString::number(before)));
        QVERIFY2(runCli({"pairs", "--db", db, "-c", imported, "-n", "300"}).exitCode == 0, "pairs");
        QVERIFY2(runCli({"label", "--db", db, "--rule", "motif:1$"}).exitCode == 0, "label");
        const Run train = runCli({"train", "--db", db, "-c", imported, "-o", path("nodata-run"), "--steps", "150",
                                  "--lr", "3e-4", "--eval-every", "0", "--eval-samples", "200", "--threads", "1"});
        QVERIFY2(train.exitCode == 0, qPrintable(train.err));
        const QString tuned = train.out.section("fine-tuned checkpoint: ", 1).section('\n', 0, 0).trimmed();
        const double after = ruleShare(tuned);
        qInfo("without data: rule share (last bit 1) %.3f before, %.3f after D2-DPO on 300 labelled pairs", before, after);
        QVERIFY2(after > before + 0.1, qPrintable(QString("%1 -> %2").arg(before).arg(after)));

        // What needs the data says so.
        expectRefusal({"train", "-c", imported, "-o", path("nodata-rule"), "--steps", "2"},
                      "label sampled pairs instead", kExitFailure);
        const Run bench = runCli({"bench", "-c", imported, "--min-seconds", "0.2", "--batch", "8"});
        QVERIFY2(bench.exitCode == 0 && bench.out.contains("pretraining n/a"), qPrintable(bench.out + bench.err));
    }

    void aSequencesTaskNeedsItsLengthsOrDataAndTheVocabularysSymbols()
    {
        const QStringList tiny{"import", "--torchscript", path("bad/tiny.pt"), "--vocabulary", path("bad/tiny.vocab.json"),
                               "-o", path("bad/nodata.d2dpo")};
        expectRefusal(tiny, "give the longest sequence (--max-length N)", kExitFailure);
        expectRefusal(tiny + QStringList{"--max-length", "8", "--min-length", "3"}, "names no pad id", kExitFailure);
        expectRefusal(tiny + QStringList{"--max-length", "8", "--valid", "in-data"}, "needs the data file", kExitFailure);
        expectRefusal(tiny + QStringList{"--max-length", "8", "--rule", "in-data"}, "needs the data file", kExitFailure);
        QVERIFY(!QFile::exists(path("bad/nodata.d2dpo")));
        const QString data = path("bad/letters.txt");
        QFile file(data);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("0101\n01x1\n");
        file.close();
        expectRefusal({"import", "--torchscript", path("bad/tiny.pt"), "--vocabulary", path("bad/tiny.vocab.json"),
                       "--data", data, "-o", path("bad/letters.d2dpo")},
                      "'x' at position 3 is not in the vocabulary 01", kExitFailure);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("0101\n011\n");
        file.close();
        expectRefusal({"import", "--torchscript", path("bad/tiny.pt"), "--vocabulary", path("bad/tiny.vocab.json"),
                       "--data", data, "-o", path("bad/letters.d2dpo")},
                      "names no pad id", kExitFailure);
        QVERIFY(!QFile::exists(path("bad/letters.d2dpo")));
    }
};

QTEST_GUILESS_MAIN(TestImport)
#include "tst_import.moc"
