// SPDX-License-Identifier: GPL-3.0-or-later
// Bring your own model, end to end against models made by Python's torch in the test: the two
// example architectures of python/examples (a DiT with adaLN and rotary embeddings, an
// nn.TransformerEncoder framed by <cls>/<eos> with the mask id among the symbols) are pretrained
// briefly on the paper's binary integers, imported, compared with Python's logits, sampled,
// aligned with D2-DPO toward the odd rule, exported, and the export run again in Python. Then
// every bad input an import must refuse, with its message and nothing written. A model imported
// without data is labelled on its own samples and aligned from the store.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QtTest>
#include <QRegularExpression>

#include <csignal>
#include <sys/stat.h>

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
/// C++ model's on the same tokens and times, over 1 + the largest |logit|: d2dpo runs a model's
/// attention in its own kernel, the same arithmetic in another order, so logits that training made
/// large differ by rounding in proportion to their size.
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
    double gap = 0, scale = 0;
    for (int64_t i = 0; i < ours.numel(); ++i) {
        gap = std::max(gap, std::abs(ours[i].item<double>() - theirs[int(i)].toDouble()));
        scale = std::max(scale, std::abs(theirs[int(i)].toDouble()));
    }
    return gap / (1 + scale);
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
        QTest::addColumn<QString>("name");
        QTest::addColumn<QStringList>("training");
        QTest::newRow("DiT: adaLN, rotary, sigma") << QStringLiteral("dit") << QStringLiteral("dit")
                                                   << QStringList{"--lr", "3e-4"};
        QTest::newRow("nn.TransformerEncoder: <cls>/<eos>, mask among symbols")
            << QStringLiteral("encoder") << QStringLiteral("encoder") << QStringList{"--lr", "3e-4"};
        // Low-rank adapters reach what training every weight does; the export holds them merged.
        QTest::newRow("DiT with low-rank adapters") << QStringLiteral("dit") << QStringLiteral("dit-lora")
                                                    << QStringList{"--lr", "5e-4", "--lora-rank", "8"};
    }

    void aModelBroughtInIsAlignedAndGoesBackToPython()
    {
        QFETCH(QString, architecture);
        QFETCH(QString, name);
        QFETCH(QStringList, training);
        const QString model = path(architecture + ".pt"), vocabulary = path(architecture + ".vocab.json");
        const QString imported = path(name + ".d2dpo");
        const Run import = runCli({"import", "--torchscript", model, "--vocabulary", vocabulary, "--task",
                                   "binary-integers", "--rule", "odd", "--eval-samples", "500", "-o", imported});
        QVERIFY2(import.exitCode == 0, qPrintable(import.err));
        QVERIFY2(import.out.contains("logits over"), qPrintable(import.out));
        // The DiT spells its attention out: d2dpo's kernel runs it (the logits below stay Python's).
        if (architecture == QStringLiteral("dit"))
            QVERIFY2(import.out.contains("attention: "), qPrintable(import.out));

        // The same logits as Python's on fixed inputs.
        const QString before = path(architecture + "-python.json");
        const Run logits = runPython({kWrap, "logits", "--model", model, "--vocabulary", vocabulary, "--length", "16",
                                      "-o", before});
        QVERIFY2(logits.exitCode == 0, qPrintable(logits.err));
        const double importGap = largestLogitGap(before, imported);
        qInfo("%s: largest logit difference to Python after import, relative: %.3g", qPrintable(architecture), importGap);
        QVERIFY2(importGap <= 1e-5, qPrintable(QString::number(importGap)));

        const Run sample = runCli({"sample", "-c", imported, "-n", "5"});
        QVERIFY2(sample.exitCode == 0, qPrintable(sample.err));
        QCOMPARE(sample.out.split('\n', Qt::SkipEmptyParts).size(), 5);

        // D2-DPO toward odd integers: the odd ratio rises past 0.9.
        const Run referenceEval = runCli({"eval", "-c", imported, "-n", "1000", "--json"});
        QVERIFY2(referenceEval.exitCode == 0, qPrintable(referenceEval.err));
        const double oddBefore = metric(referenceEval.out, "odd_ratio");
        const QString run = path(name + "-run");
        const Run train = runCli(QStringList{"train", "-c", imported, "-o", run, "--steps", "400", "--eval-every", "0",
                                             "--eval-samples", "200", "--threads", "1"} +
                                 training);
        QVERIFY2(train.exitCode == 0, qPrintable(train.err));
        const QString marker = QStringLiteral("fine-tuned checkpoint: ");
        const QString tuned = train.out.mid(train.out.indexOf(marker) + marker.size()).section('\n', 0, 0).trimmed();
        QVERIFY2(QFile::exists(tuned), qPrintable(train.out));
        const Run tunedEval = runCli({"eval", "-c", tuned, "-n", "1000", "--json"});
        QVERIFY2(tunedEval.exitCode == 0, qPrintable(tunedEval.err));
        const double oddAfter = metric(tunedEval.out, "odd_ratio");
        qInfo("%s: odd ratio %.3f before, %.3f after D2-DPO (VSR %.3f)", qPrintable(name), oddBefore, oddAfter,
              metric(tunedEval.out, "vsr"));
        QVERIFY2(oddAfter > 0.9, qPrintable(tunedEval.out));

        // Export: model.pt runs in Python with the C++ model's logits.
        const QString exported = path(name + "-export");
        const Run exportRun = runCli({"export", "-c", tuned, "-o", exported, "-n", "10"});
        QVERIFY2(exportRun.exitCode == 0, qPrintable(exportRun.err));
        for (const char* name : {"model.pt", "vocabulary.json", "weights.pt", "model_card.json", "samples.txt"})
            QVERIFY2(QFile::exists(exported + "/" + name), name);
        const QString after = path(name + "-export.json");
        const Run exportedLogits = runPython({kWrap, "logits", "--model", exported + "/model.pt", "--vocabulary",
                                              exported + "/vocabulary.json", "--length", "16", "-o", after});
        QVERIFY2(exportedLogits.exitCode == 0, qPrintable(exportedLogits.err));
        const double exportGap = largestLogitGap(after, tuned);
        qInfo("%s: largest logit difference to Python's torch.jit.load of the export, relative: %.3g", qPrintable(name),
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
        QTest::newRow("NaN only for 0.4 < t < 0.6")
            << "not-finite-in-a-band" << "tiny" << "not finite (NaN or infinite) at t = 0.406 (one of 33 noise levels";
        QTest::newRow("forward throws") << "throws" << "tiny" << "only runs on sequences of length 0";
        QTest::newRow("id out of range") << "tiny" << "out-of-range" << "names id 7, outside the model's 3 logits";
        QTest::newRow("no mask") << "tiny" << "no-mask" << "no mask id";
        QTest::newRow("mask twice") << "tiny" << "twice-mask" << "the key \"mask\" appears twice";
        QTest::newRow("symbols collide") << "tiny" << "collide" << "ids collide: symbol '0' and symbol '1'";
        QTest::newRow("mask is a symbol") << "tiny" << "mask-is-symbol" << "ids collide: symbol '1' and the mask";
        QTest::newRow("symbol of two characters") << "tiny" << "long-symbol" << "is not one character";
        QTest::newRow("a vocabulary as the model") << "tiny.vocab.json" << "tiny" << "not a TorchScript archive";
        QTest::newRow("a NUL byte, then more") << "tiny" << "nul" << "holds a NUL byte at offset 40";
        QTest::newRow("100,000 nested objects") << "tiny" << "deep" << "nested more than 8 arrays or objects deep";
        QTest::newRow("100,000 nested lists") << "tiny" << "deep-begin" << "nested more than 8 arrays or objects deep";
        QTest::newRow("an escape character as a symbol") << "tiny" << "control" << "symbol \"\\x1b\" is a control character";
        // A model is code: whatever it could do to the user's files is refused before it runs.
        QTest::newRow("torch.from_file in forward") << "writes-a-file" << "tiny"
                                                    << "(code/__torch__.py, line 13) calls aten::from_file";
        QTest::newRow("torch.save in forward") << "saves-a-file" << "tiny" << "calls aten::save, which is not";
        QTest::newRow("an op reached as a method") << "sets-by-method" << "tiny" << "calls aten::set_, which is not";
        // Values LibTorch computes while it compiles, before any graph could be checked.
        QTest::newRow("a computed default") << "computed-default" << "tiny" << "parameter 'z' a default value that is computed";
        QTest::newRow("a computed class constant") << "computed-constant" << "tiny" << "class 'Tiny' a value that is computed";
        QTest::newRow("a computed annotation") << "computed-annotation" << "tiny" << "class 'Tiny' a value that is computed";
        QTest::newRow("code run while loading") << "writes-while-loading" << "tiny" << "defines __setstate__";
        // The loader finds records case-blind: each dressing of that archive is refused by its names.
        QTest::newRow("its code under CODE/") << "upper-case-code" << "tiny" << "is not one TorchScript writes";
        QTest::newRow("its code under Code/") << "mixed-case-code" << "tiny" << "is not one TorchScript writes";
        QTest::newRow("its code under .data/") << "code-under-data" << "tiny" << "is not one TorchScript writes";
        QTest::newRow("a record TorchScript never writes") << "extra-record" << "tiny" << "is not one TorchScript writes";
        QTest::newRow("a code record named twice") << "duplicate-name" << "tiny" << "holds two records named";
        QTest::newRow("names that differ only in case") << "case-twins" << "tiny" << "which differ only in case";
        QTest::newRow("searchsorted, whose sorter LibTorch 1.13 never checks")
            << "searches-out-of-bounds" << "tiny" << "calls aten::searchsorted";
        QTest::newRow("a TorchBind class") << "uses-torchbind" << "tiny" << "TorchBind class";
        QTest::newRow("a custom op") << "custom-op" << "tiny" << "d2dpo_test_custom::touch";
        // Pickles LibTorch 1.13's unpickler would trust: each is walked first and refused.
        QTest::newRow("a storage larger than its record") << "storage-past-record" << "tiny" << "elements of 4 bytes in the record";
        QTest::newRow("a tensor past its storage") << "tensor-past-storage" << "tiny" << "a tensor that reads element 10";
        QTest::newRow("a pickle that pops an empty stack") << "pickle-underflow" << "tiny" << "TUPLE without a MARK";
        QTest::newRow("an opcode TorchScript never writes") << "pickle-unknown-opcode" << "tiny" << "the opcode 0x49";
        QTest::newRow("a global outside TorchScript's") << "pickle-foreign-global" << "tiny" << "the global 'builtins.eval'";
        QTest::newRow("a memo slot never set") << "pickle-unset-memo" << "tiny" << "memo slot 250, which was never set";
        QTest::newRow("a debug pickle that pops an empty stack") << "debug-pickle-underflow" << "tiny" << "TUPLE without a MARK";
        QTest::newRow("a cast from Any to a class") << "cast-from-any" << "tiny"
                                                   << "casts a Any to a __torch__.torch.nn.modules.linear.Linear";
        QTest::newRow("a cast to an unrelated type") << "unchecked-cast" << "tiny" << "casts a Tensor to a List[int] without a check";
        QTest::newRow("a code record that inflates to 100 MiB") << "code-bomb" << "tiny" << "a zip bomb is never read";
        QTest::newRow("a tensor record that inflates to 300 MiB") << "data-bomb" << "tiny" << "a zip bomb is never read";
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

    void aModelThatBreaksOnLargerBatchesIsNamedInOneSentence()
    {
        // It passes the probe's 4 rows and fails on the measurement's batch: the message ends at
        // the sentence, with no C++ stack trace after it.
        const Run import = runCli({"import", "--torchscript", path("bad/wrong-shape-above-four.pt"), "--vocabulary",
                                   path("bad/tiny.vocab.json"), "--task", "binary-integers", "--eval-samples", "16",
                                   "-o", path("bad/refused.d2dpo")});
        QCOMPARE(import.exitCode, kExitFailure);
        const QString error = import.err.section("d2dpo import: error: ", 1);
        QVERIFY2(error.contains("returned logits of shape [16, 15, 3] for 16 sequences of 16 ids"), qPrintable(import.err));
        QVERIFY2(!error.contains("Exception raised") && !error.contains("frame #") && error.count('\n') == 1,
                 qPrintable(error));
        QVERIFY(!QFile::exists(path("bad/refused.d2dpo")));
    }

    void anEvaluationSaysWhenTheModelGaveNonFiniteLogits()
    {
        // NaN only between the probe's noise levels: imported, then met by 64 Euler steps (t = 33/64).
        const QString model = path("bad/narrow-band.d2dpo");
        const Run import = runCli({"import", "--torchscript", path("bad/not-finite-in-a-narrow-band.pt"), "--vocabulary",
                                   path("bad/tiny.vocab.json"), "--task", "binary-integers", "--eval-samples", "0",
                                   "-o", model});
        QVERIFY2(import.exitCode == 0, qPrintable(import.err));
        const Run eval = runCli({"eval", "-c", model, "-n", "20", "--sampler", "euler", "--sampling-steps", "64",
                                 "--threads", "1"});
        QVERIFY2(eval.out.contains("non_finite_passes") || eval.err.contains("non_finite_passes"),
                 qPrintable(eval.out + eval.err));
        const Run fine = runCli({"eval", "-c", model, "-n", "20", "--sampler", "euler", "--sampling-steps", "16",
                                 "--threads", "1"}); // t = k/16: never in the band
        QVERIFY2(fine.exitCode == 0 && !fine.out.contains("non_finite_passes"), qPrintable(fine.out + fine.err));
    }

    void aDeviceOrAPipeAsTheVocabularyIsRefusedUnread()
    {
        const QString fifo = path("bad/vocabulary.fifo");
        QVERIFY(::mkfifo(QFile::encodeName(fifo).constData(), 0600) == 0);
        for (const QString& vocabulary : {QStringLiteral("/dev/zero"), fifo})
            expectRefusal({"import", "--torchscript", path("bad/tiny.pt"), "--vocabulary", vocabulary, "--task",
                           "binary-integers", "-o", path("bad/refused.d2dpo")},
                          "not a regular file", kExitFailure);
        QVERIFY(!QFile::exists(path("bad/refused.d2dpo")));
    }

    void aForwardThatNeverReturnsIsNamedAndLeftBehind()
    {
        // Its own time limit, and the first Ctrl-C, end the import with a sentence.
        QElapsedTimer clock;
        clock.start();
        expectRefusal({"import", "--torchscript", path("bad/loops.pt"), "--vocabulary", path("bad/tiny.vocab.json"),
                       "--task", "binary-integers", "--probe-seconds", "2", "-o", path("bad/refused.d2dpo")},
                      "its forward on a probe batch of 4 sequences of 16 ids did not return within 2 s", kExitFailure);
        QVERIFY2(clock.elapsed() < 30000, qPrintable(QString::number(clock.elapsed())));
        QProcess import;
        import.start(d2dpo::test::kCli, {"import", "--torchscript", path("bad/loops.pt"), "--vocabulary",
                                              path("bad/tiny.vocab.json"), "--task", "binary-integers", "-o",
                                              path("bad/refused.d2dpo")});
        QVERIFY(import.waitForStarted());
        QByteArray err; // the import's steps are said on standard error
        QTRY_VERIFY_WITH_TIMEOUT((err += import.readAllStandardError()).contains("loaded forward"), 30000);
        clock.restart();
        ::kill(pid_t(import.processId()), SIGINT);
        QVERIFY(import.waitForFinished(10000));
        qInfo("the first Ctrl-C ended a looping import after %lld ms", static_cast<long long>(clock.elapsed()));
        QCOMPARE(import.exitCode(), 128 + SIGINT);
        err += import.readAllStandardError();
        QVERIFY2(err.contains("stopped while its forward"), err.constData());
        QVERIFY(!QFile::exists(path("bad/refused.d2dpo")));
    }

    void aStopDuringAHangingMeasurementEndsTheImportAtOnce()
    {
        // The forward passes the probe and hangs on the measurement's first batch: the first
        // Ctrl-C ends the import within 2 s, and it says truthfully that nothing was written.
        QProcess import;
        import.start(d2dpo::test::kCli, {"import", "--torchscript", path("bad/loops-on-large-batches.pt"),
                                         "--vocabulary", path("bad/tiny.vocab.json"), "--task", "binary-integers",
                                         "--eval-samples", "64", "-o", path("bad/hangs.d2dpo")});
        QVERIFY(import.waitForStarted());
        QByteArray err;
        QTRY_VERIFY_WITH_TIMEOUT((err += import.readAllStandardError()).contains("probed:"), 60000);
        QTest::qWait(2000); // into the measurement's first batch, which never returns
        QElapsedTimer clock;
        clock.start();
        ::kill(pid_t(import.processId()), SIGINT);
        QVERIFY(import.waitForFinished(10000));
        const qint64 took = clock.elapsed();
        qInfo("the first Ctrl-C ended a hanging measurement after %lld ms", static_cast<long long>(took));
        QVERIFY2(took < 2000 + 1000, qPrintable(QString::number(took))); // 2 s, and the process's own exit
        QCOMPARE(import.exitCode(), 128 + SIGINT);
        const QByteArray out = import.readAllStandardOutput();
        QVERIFY2(out.contains("nothing was written"), out.constData());
        QVERIFY(!QFile::exists(path("bad/hangs.d2dpo")));
    }

    void aModelsWarningsAreSaidOnceAndShort()
    {
        // warnings.warn with 8 MB on every forward: said once, as an excerpt, not a flood.
        const Run import = runCli({"import", "--torchscript", path("bad/warns-loudly.pt"), "--vocabulary",
                                   path("bad/tiny.vocab.json"), "--task", "binary-integers", "--eval-samples", "8",
                                   "-o", path("bad/loud.d2dpo")});
        QVERIFY2(import.exitCode == 0, qPrintable(import.err.left(2000)));
        const QStringList lines = import.err.split('\n');
        QCOMPARE(lines.filter(QStringLiteral("Warning: loud loud")).size(), 1);
        for (const QString& line : lines)
            QVERIFY2(line.size() < 600, qPrintable(QString("a line of %1 characters").arg(line.size())));
    }

    void aCheckpointWhoseArchiveRunsCodeWhileLoadingIsRefused()
    {
        // A .d2dpo is an archive too: one whose payload defines __setstate__ (the checksum made
        // right) is refused before it is loaded, by every command that opens a checkpoint.
        // The same payload under names the loader reads case-blind, or twice, is refused by its names.
        const std::vector<std::pair<QString, QString>> checkpoints{
            {"writes-while-loading", "defines __setstate__"},
            {"upper-case-code", "is not one TorchScript writes"},
            {"mixed-case-code", "is not one TorchScript writes"},
            {"duplicate-name", "holds two records named"},
            {"case-twins", "which differ only in case"}};
        for (const auto& [name, phrase] : checkpoints)
            for (const QStringList& command :
                 {QStringList{"eval", "-n", "4"}, QStringList{"sample", "-n", "2"},
                  QStringList{"export", "-n", "0", "-o", path("bad/export-" + name)}})
                expectRefusal(command + QStringList{"-c", path("bad/" + name + ".d2dpo")}, phrase, kExitFailure);
        // Nothing refused here or above touched the file the models aim at.
        QFile victim(path("bad/victim.sh"));
        QVERIFY(victim.open(QIODevice::ReadOnly));
        QCOMPARE(victim.readAll(), QByteArray("echo untouched\n"));
    }

    void theExampleProteinModelsPassTheOperationCheck()
    {
        // ESM2-shaped models, time-agnostic and time-conditioned, use only allowed operations, and
        // each of their 6 blocks' attention runs in d2dpo's fused kernel.
        for (const QString& time : {QString(), QStringLiteral("--time")}) {
            QStringList make{QStringLiteral(D2DPO_SOURCE_DIR "/python/examples/esm2.py"), "8M", "--length", "12",
                             "-o", path("esm.pt")};
            if (!time.isEmpty())
                make << time;
            const Run made = runPython(make);
            QVERIFY2(made.exitCode == 0, qPrintable(made.err));
            const Run import = runCli({"import", "--torchscript", path("esm.pt"), "--vocabulary", path("esm.vocab.json"),
                                       "--task", "sequences", "--max-length", "12", "--eval-samples", "0", "-o",
                                       path("esm" + time + ".d2dpo")});
            QVERIFY2(import.exitCode == 0, qPrintable(time + import.err));
            QVERIFY2(import.out.contains("attention: 6 of its"), qPrintable(import.out));
        }
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
        // Under the archive limit, but past what this machine's free memory can train: a quarter of it.
        QFile meminfo(QStringLiteral("/proc/meminfo"));
        QVERIFY(meminfo.open(QIODevice::ReadOnly));
        const QString text = QString::fromLatin1(meminfo.readAll());
        const auto found = QRegularExpression(QStringLiteral("MemAvailable:\\s+(\\d+) kB")).match(text);
        QVERIFY(found.hasMatch());
        const qint64 available = found.captured(1).toLongLong() * 1024;
        if (available / 4 > (qint64(15) << 30))
            QSKIP("more than 60 GiB free: a quarter of it is past the archive limit, refused above");
        QFile large(huge);
        QVERIFY(large.open(QIODevice::WriteOnly));
        QVERIFY(large.resize(available / 4));
        large.close();
        expectRefusal({"import", "--torchscript", huge, "--vocabulary", path("bad/tiny.vocab.json"), "--task",
                       "binary-integers", "-o", out},
                      "is available", kExitFailure);
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
