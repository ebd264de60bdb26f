// SPDX-License-Identifier: GPL-3.0-or-later
// Published weights end to end through the CLI, as a user brings ESM2: random-weight ESM2-8M and
// 35M written in transformers' layout by python/esm_published.py, imported with `d2dpo import
// --weights`, aligned with D2-DPO on rule-made pairs, exported, and read back by the Python
// reference: the export's keys and shapes are the original's, its logits equal the fine-tuned
// checkpoint's, and the task's metrics recounted from its samples equal the model card's. Then
// what the import must refuse through the CLI, each with its sentence and nothing written. MDLM
// takes the same road with python/mdlm_published.py: a time-conditioned DiT on letters.
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <tuple>

#include <torch/torch.h>

#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "model/ditdenoiser.h"
#include "model/esmdenoiser.h"
#include "support/clirun.h"

using namespace d2dpo;
using d2dpo::test::CliRun;
using d2dpo::test::expectRefusal;
using d2dpo::test::kExitFailure;
using d2dpo::test::runCli;

namespace {

const QString kPython = QStringLiteral("/usr/bin/python3");
const QString kScript = QStringLiteral(D2DPO_SOURCE_DIR "/python/esm_published.py");
const QString kMdlmScript = QStringLiteral(D2DPO_SOURCE_DIR "/python/mdlm_published.py");

CliRun runPython(const QStringList& arguments, const QString& script = kScript)
{
    QProcess process;
    process.start(kPython, QStringList{script} + arguments);
    return d2dpo::test::finishProcess(process);
}

std::string readFile(const QString& path)
{
    std::ifstream in(path.toStdString(), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

/// name -> shape of a safetensors file's tensors.
std::map<std::string, std::vector<int64_t>> shapesOf(const QString& path)
{
    std::map<std::string, std::vector<int64_t>> out;
    auto read = readSafetensors(readFile(path));
    if (read)
        for (const auto& [name, tensor] : read->tensors)
            out[name] = tensor.sizes().vec();
    return out;
}

QJsonObject jsonOf(const QString& text) { return QJsonDocument::fromJson(text.toUtf8()).object(); }

/// The task's metrics recounted by the Python reference from an export's 60 samples equal the
/// model card's, and the card names the architecture.
void recountEqualsTheCard(const QString& exported, const QString& composition, const QString& script,
                          const QString& architecture)
{
    const CliRun recount = runPython({"recount", exported + "/samples.txt", "--composition", composition}, script);
    QVERIFY2(recount.exitCode == 0, qPrintable(recount.err));
    QFile cardFile(exported + "/model_card.json");
    QVERIFY(cardFile.open(QIODevice::ReadOnly));
    const QJsonObject card = QJsonDocument::fromJson(cardFile.readAll()).object();
    const QJsonObject metrics = card["export_samples"].toObject()["metrics"].toObject();
    const QJsonObject counted = jsonOf(recount.out);
    QCOMPARE(counted["samples"].toInt(), 60);
    QVERIFY(qAbs(counted["vsr"].toDouble() - metrics["vsr"].toDouble()) < 1e-9);
    QVERIFY2(qAbs(counted["rule_share"].toDouble() - metrics["rule_share"].toDouble()) < 1e-9, qPrintable(recount.out));
    QCOMPARE(card["published_weights"].toObject()["architecture"].toString(), architecture);
}

} // namespace

class TestPublishedWeights : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString path(const QString& name) const { return m_dir.filePath(name); }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        if (runPython({"--help"}).exitCode != 0)
            QSKIP("/usr/bin/python3 with torch (Debian's python3-torch) is not installed");
        // 300 random proteins of 30 residues: the task's data, its lengths and the in-data share.
        // And 300 words of 24 letters for MDLM.
        for (auto [file, letters, count] : {std::tuple{"proteins.txt", "ACDEFGHIKLMNPQRSTVWY", 30},
                                            std::tuple{"words.txt", "abcdefghijklmnopqrstuvwxyz", 24}}) {
            QFile data(path(file));
            QVERIFY(data.open(QIODevice::WriteOnly));
            std::mt19937 random(5);
            for (int i = 0; i < 300; ++i) {
                QByteArray row;
                for (int j = 0; j < count; ++j)
                    row += letters[random() % strlen(letters)];
                data.write(row + "\n");
            }
        }
    }

    void importAlignExportReadBack_data()
    {
        QTest::addColumn<QString>("size");
        QTest::addColumn<int>("steps");
        QTest::newRow("ESM2-8M") << "8M" << 20;
        QTest::newRow("ESM2-35M") << "35M" << 4;
    }
    void importAlignExportReadBack()
    {
        QFETCH(QString, size);
        QFETCH(int, steps);
        const QString weights = path("weights-" + size);
        CliRun made = runPython({"write", weights, "--size", size, "--seed", "11"});
        QVERIFY2(made.exitCode == 0, qPrintable(made.err));

        const QString imported = path("esm-" + size + ".d2dpo");
        const QStringList sampling{"--sampler", "confident", "--sampling-steps", "8", "--threads", "2"};
        const CliRun import = runCli(QStringList{"import", "--weights", weights, "--data", path("proteins.txt"), "--rule",
                                                 "composition:KR", "--eval-samples", "40", "-o", imported} +
                                     sampling);
        QVERIFY2(import.exitCode == 0, qPrintable(import.err));
        QVERIFY2(import.out.contains("recognised: ESM2"), qPrintable(import.out));
        QVERIFY2(import.out.contains("framed by 2 fixed ids"), qPrintable(import.out));

        const QString run = path("run-" + size);
        const CliRun train = runCli(QStringList{"train", "-c", imported, "-o", run, "--steps", QString::number(steps),
                                                "--batch", "8", "--lr", "1e-5", "--pairs", "500", "--eval-every", "0",
                                                "--eval-samples", "40"} +
                                    sampling);
        QVERIFY2(train.exitCode == 0, qPrintable(train.err));
        const QString tuned = train.out.section("fine-tuned checkpoint: ", 1).section('\n', 0, 0).trimmed();
        QVERIFY2(QFile::exists(tuned), qPrintable(train.out));

        const QString exported = path("export-" + size);
        const CliRun exportRun = runCli(QStringList{"export", "-c", tuned, "-o", exported, "-n", "60"} + sampling.mid(0, 4));
        QVERIFY2(exportRun.exitCode == 0, qPrintable(exportRun.err));
        QVERIFY2(exportRun.out.contains("model.safetensors, config.json, vocab.txt"), qPrintable(exportRun.out));

        // The same layout: every key of the original with its shape, nothing else, and the
        // config and vocabulary as they came.
        QCOMPARE(shapesOf(exported + "/model.safetensors"), shapesOf(weights + "/model.safetensors"));
        QCOMPARE(readFile(exported + "/config.json"), readFile(weights + "/config.json"));
        QCOMPARE(readFile(exported + "/vocab.txt"), readFile(weights + "/vocab.txt"));

        // Read back by the Python reference: its logits are the fine-tuned checkpoint's, and they
        // moved away from the original's (the export holds the aligned weights, not the imported).
        const QString reference = exported + "/reference.safetensors";
        made = runPython({"logits", exported, reference, "--batch", "3", "--length", "32"});
        QVERIFY2(made.exitCode == 0, qPrintable(made.err));
        auto read = readSafetensors(readFile(reference));
        QVERIFY(read);
        torch::Tensor ids, pythonLogits;
        for (auto& [name, tensor] : read->tensors)
            (name == "ids" ? ids : pythonLogits) = tensor;
        const auto logitsOf = [&](const QString& checkpoint) {
            auto loaded = loadCheckpoint(checkpoint.toStdString(), torch::kCPU);
            if (!loaded)
                return torch::Tensor();
            torch::NoGradGuard noGrad;
            return std::dynamic_pointer_cast<EsmDenoiser>(loaded->model)->modelLogits(ids).to(torch::kDouble);
        };
        const auto fineTuned = logitsOf(tuned);
        const auto original = logitsOf(imported);
        QVERIFY(fineTuned.defined() && original.defined());
        const double gap = (fineTuned - pythonLogits).abs().max().item<double>();
        const double moved = (original - pythonLogits).abs().max().item<double>();
        qInfo("%s: exported logits vs the fine-tuned checkpoint's %.2e; vs the imported model's %.2e", qPrintable(size),
              gap, moved);
        QVERIFY2(gap < 1e-4, qPrintable(QString::number(gap)));
        QVERIFY2(moved > 1e-3, qPrintable(QString::number(moved)));

        // The task's metrics recounted from the export's samples in Python equal the model card's.
        recountEqualsTheCard(exported, "KR", kScript, QStringLiteral("ESM2"));
    }

    /// MDLM the same way: a time-conditioned DiT with its text8 vocabulary, imported, aligned on
    /// rule-made pairs, exported under "backbone." and read back by the Python reference.
    void mdlmImportAlignExportReadBack()
    {
        const QString weights = path("weights-mdlm");
        CliRun made = runPython({"write", weights, "--size", "medium-narrow", "--seed", "11", "--time-conditioning"},
                                kMdlmScript);
        QVERIFY2(made.exitCode == 0, qPrintable(made.err));
        const QString imported = path("mdlm.d2dpo");
        const QStringList sampling{"--sampler", "confident", "--sampling-steps", "8", "--threads", "2"};
        const CliRun import = runCli(QStringList{"import", "--weights", weights, "--data", path("words.txt"), "--rule",
                                                 "composition:ae", "--eval-samples", "40", "-o", imported} +
                                     sampling);
        QVERIFY2(import.exitCode == 0, qPrintable(import.err));
        QVERIFY2(import.out.contains("recognised: MDLM"), qPrintable(import.out));
        const QString run = path("run-mdlm");
        const CliRun train = runCli(QStringList{"train", "-c", imported, "-o", run, "--steps", "8", "--batch", "8",
                                                "--lr", "1e-4", "--pairs", "500", "--eval-every", "0", "--eval-samples",
                                                "40"} +
                                    sampling);
        QVERIFY2(train.exitCode == 0, qPrintable(train.err));
        const QString tuned = train.out.section("fine-tuned checkpoint: ", 1).section('\n', 0, 0).trimmed();
        QVERIFY2(QFile::exists(tuned), qPrintable(train.out));
        const QString exported = path("export-mdlm");
        const CliRun exportRun = runCli(QStringList{"export", "-c", tuned, "-o", exported, "-n", "60"} + sampling.mid(0, 4));
        QVERIFY2(exportRun.exitCode == 0, qPrintable(exportRun.err));
        QCOMPARE(shapesOf(exported + "/model.safetensors"), shapesOf(weights + "/model.safetensors"));
        QCOMPARE(readFile(exported + "/config.json"), readFile(weights + "/config.json"));
        QCOMPARE(readFile(exported + "/vocab.txt"), readFile(weights + "/vocab.txt"));

        const QString reference = exported + "/reference.safetensors";
        made = runPython({"logits", exported, reference, "--batch", "3", "--length", "24"}, kMdlmScript);
        QVERIFY2(made.exitCode == 0, qPrintable(made.err));
        auto read = readSafetensors(readFile(reference));
        QVERIFY(read);
        torch::Tensor ids, sigma, pythonLogits;
        for (auto& [name, tensor] : read->tensors)
            (name == "ids" ? ids : name == "sigma" ? sigma : pythonLogits) = tensor;
        const auto logitsOf = [&](const QString& checkpoint) {
            auto loaded = loadCheckpoint(checkpoint.toStdString(), torch::kCPU);
            if (!loaded)
                return torch::Tensor();
            torch::NoGradGuard noGrad;
            return std::dynamic_pointer_cast<DitDenoiser>(loaded->model)
                ->modelLogits(ids, sigma.to(torch::kFloat32))
                .to(torch::kDouble);
        };
        const auto fineTuned = logitsOf(tuned);
        const auto original = logitsOf(imported);
        QVERIFY(fineTuned.defined() && original.defined());
        const double gap = (fineTuned - pythonLogits).abs().max().item<double>();
        const double moved = (original - pythonLogits).abs().max().item<double>();
        qInfo("MDLM: exported logits vs the fine-tuned checkpoint's %.2e; vs the imported model's %.2e", gap, moved);
        QVERIFY2(gap < 1e-4, qPrintable(QString::number(gap)));
        QVERIFY2(moved > 1e-3, qPrintable(QString::number(moved)));

        recountEqualsTheCard(exported, "ae", kMdlmScript, QStringLiteral("MDLM"));
    }

    void refusalsSaySoAndWriteNothing()
    {
        const QString good = path("good");
        QVERIFY(runPython({"write", good, "--size", "tiny"}).exitCode == 0);
        const QString out = path("refused.d2dpo");
        const QStringList tail{"--max-length", "20", "--eval-samples", "0", "-o", out};
        const QString pickled = path("pickled");
        QDir().mkpath(pickled);
        for (const char* file : {"config.json", "vocab.txt"})
            QFile::copy(good + "/" + file, pickled + "/" + file);
        QFile::copy(good + "/model.safetensors", pickled + "/pytorch_model.bin");
        expectRefusal(QStringList{"import", "--weights", pickled} + tail, "is a pickle, which runs code when loaded",
                      kExitFailure);
        expectRefusal(QStringList{"import", "--weights", pickled + "/pytorch_model.bin"} + tail, "safe_serialization",
                      kExitFailure);
        expectRefusal(QStringList{"import"} + tail, "--weights DIR", kExitFailure);
        expectRefusal(QStringList{"import", "--weights", good, "--torchscript", good + "/model.safetensors"} + tail,
                      "--weights DIR", kExitFailure);
        const QString bert = path("bert");
        QDir().mkpath(bert);
        for (const char* file : {"model.safetensors", "vocab.txt"})
            QFile::copy(good + "/" + file, bert + "/" + file);
        QFile config(bert + "/config.json");
        QVERIFY(config.open(QIODevice::WriteOnly));
        config.write(R"({"model_type": "bert", "hidden_size": 64})");
        config.close();
        expectRefusal(QStringList{"import", "--weights", bert} + tail, "d2dpo import --torchscript", kExitFailure);
        const QString shortConfig = path("short");
        QDir().mkpath(shortConfig);
        for (const char* file : {"model.safetensors", "vocab.txt"})
            QFile::copy(good + "/" + file, shortConfig + "/" + file);
        QFile shortFile(shortConfig + "/config.json");
        QVERIFY(shortFile.open(QIODevice::WriteOnly));
        shortFile.write(QByteArray::fromStdString(readFile(good + "/config.json"))
                            .replace("\"max_position_embeddings\": 1026", "\"max_position_embeddings\": 21"));
        shortFile.close();
        expectRefusal(QStringList{"import", "--weights", shortConfig} + tail, "max_position_embeddings (21)", kExitFailure);
        QVERIFY(!QFile::exists(out));
        // Its own weights as the output: refused, the file untouched.
        const QByteArray before = QByteArray::fromStdString(readFile(good + "/model.safetensors"));
        expectRefusal(QStringList{"import", "--weights", good, "--max-length", "20", "--eval-samples", "0", "-o",
                                  good + "/model.safetensors"},
                      "this command reads that file", kExitFailure);
        QCOMPARE(QByteArray::fromStdString(readFile(good + "/model.safetensors")), before);
        // And the good one imports, without data, named as it should.
        const CliRun ok = runCli(QStringList{"import", "--weights", good} + tail);
        QVERIFY2(ok.exitCode == 0, qPrintable(ok.err));
        QVERIFY(QFile::exists(out));
    }
};

QTEST_GUILESS_MAIN(TestPublishedWeights)
#include "tst_publishedweights.moc"
