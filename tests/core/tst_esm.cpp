// SPDX-License-Identifier: GPL-3.0-or-later
// ESM2 and DPLM run natively from their published weights (model/esmdenoiser.h), held to a
// reference written in Python from transformers' EsmForMaskedLM (python/esm_published.py, in
// float64) on random weights that the reference writes in the published layout: logits within
// 1e-4 at the 8M, 35M and 150M shapes and 50 to 1022 residues, in F32, F16 and BF16 files, tied
// and untied decoders, with and without token dropout, under ESM2's keys and DPLM's "net." prefix.
// Then the network's own consistency (the subset forward, gradients through d2dpo's kernels
// against LibTorch's generic operators), a checkpoint round trip, and every file it must refuse.
#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <fstream>

#include <nlohmann/json.hpp>

#include <torch/torch.h>

#include "io/checkpoint.h"
#include "io/publishedweights.h"
#include "io/safetensors.h"
#include "kernels/matmulprecision.h"
#include "model/esmdenoiser.h"
#include "model/esmvocabulary.h"
#include "model/loradenoiser.h"
#include "support/clirun.h"

using namespace d2dpo;

namespace {

const QString kPython = QStringLiteral("/usr/bin/python3");
const QString kScript = QStringLiteral(D2DPO_SOURCE_DIR "/python/esm_published.py");

bool runPython(const QStringList& arguments, QString* err = nullptr)
{
    QProcess process;
    process.start(kPython, QStringList{kScript} + arguments);
    const auto run = d2dpo::test::finishProcess(process, 900000);
    if (err)
        *err = run.err;
    return run.exitCode == 0;
}

std::string readFile(const QString& path)
{
    std::ifstream in(path.toStdString(), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

/// The network read as the import reads it, for a task of `length` residues.
std::shared_ptr<EsmDenoiser> load(const QString& folder, int64_t length, bool padded = false)
{
    auto weights = readPublishedWeights(folder.toStdString());
    if (!weights) {
        qWarning("%s", weights.error().c_str());
        return nullptr;
    }
    auto architecture = esmArchitecture(weights->configJson);
    auto vocabulary = esmVocabulary(weights->tokens, padded);
    if (!architecture || !vocabulary)
        return nullptr;
    auto model = EsmDenoiser::fromWeights(architecture.value(), vocabulary.value(), length, weights->prefix,
                                          std::move(weights->tensors));
    if (!model) {
        qWarning("%s", model.error().c_str());
        return nullptr;
    }
    model.value()->eval();
    return model.value();
}

/// The largest |ours - reference| over Python's logits for its ids.
double largestGap(EsmDenoiser& model, const QString& referencePath)
{
    auto reference = readSafetensors(readFile(referencePath));
    if (!reference)
        return 1e9;
    torch::Tensor ids, logits;
    for (auto& [name, tensor] : reference->tensors)
        (name == "ids" ? ids : logits) = tensor;
    torch::NoGradGuard noGrad;
    const auto ours = model.modelLogits(ids).to(torch::kDouble);
    if (ours.sizes() != logits.sizes())
        return 1e9;
    return (ours - logits).abs().max().item<double>();
}

} // namespace

class TestEsm : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString path(const QString& name) const { return m_dir.filePath(name); }

private Q_SLOTS:
    void initTestCase()
    {
        torch::manual_seed(0);
        QVERIFY(m_dir.isValid());
        QString err;
        if (!runPython({QStringLiteral("logits"), QStringLiteral("--help")}, &err))
            QSKIP("/usr/bin/python3 with torch (Debian's python3-torch) is not installed");
    }

    void logitsEqualTheReference_data()
    {
        QTest::addColumn<QStringList>("write");
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("residues");
        QTest::newRow("8M, 50 residues") << QStringList{"--size", "8M"} << 3 << 50;
        QTest::newRow("8M, 150 residues") << QStringList{"--size", "8M", "--seed", "1"} << 2 << 150;
        QTest::newRow("8M, 1022 residues") << QStringList{"--size", "8M", "--seed", "2"} << 1 << 1022;
        QTest::newRow("35M, 150 residues") << QStringList{"--size", "35M"} << 2 << 150;
        QTest::newRow("150M, 300 residues") << QStringList{"--size", "150M"} << 1 << 300;
        QTest::newRow("8M as BF16") << QStringList{"--size", "8M", "--dtype", "BF16"} << 2 << 64;
        QTest::newRow("8M as F16, untied, no token dropout")
            << QStringList{"--size", "8M", "--dtype", "F16", "--untied", "--no-token-dropout"} << 2 << 64;
        QTest::newRow("DPLM's layout (net.)") << QStringList{"--size", "8M", "--prefix", "net."} << 2 << 100;
        QTest::newRow("no passengers") << QStringList{"--size", "tiny", "--no-passengers"} << 4 << 20;
    }
    void logitsEqualTheReference()
    {
        QFETCH(QStringList, write);
        QFETCH(int, batch);
        QFETCH(int, residues);
        const QString folder = path(QStringLiteral("w%1").arg(QTest::currentDataTag()).remove(QLatin1Char(' ')));
        QString err;
        QVERIFY2(runPython(QStringList{"write", folder} + write, &err), qPrintable(err));
        const QString reference = folder + "/reference.safetensors";
        QVERIFY2(runPython({"logits", folder, reference, "--batch", QString::number(batch), "--length",
                            QString::number(residues + 2)},
                           &err),
                 qPrintable(err));
        auto model = load(folder, residues);
        QVERIFY(model);
        const double gap = largestGap(*model, reference);
        qInfo("%s: largest |logit - reference| %.2e", QTest::currentDataTag(), gap);
        QVERIFY2(gap < 1e-4, qPrintable(QString::number(gap)));
        if (write.contains("net.")) {
            QCOMPARE(model->prefix(), std::string("net."));
            QCOMPARE(readPublishedWeights(folder.toStdString())->architecture, std::string("DPLM"));
        }
    }

    /// forward() is modelLogits at the task's positions over its symbols; forwardAt() is forward()'s
    /// rows; and the gradients through d2dpo's kernels equal LibTorch's generic operators'.
    void subsetForwardAndGradientsAgree()
    {
        const QString folder = path("tiny");
        QVERIFY(runPython({"write", folder, "--size", "tiny", "--seed", "7"}));
        auto model = load(folder, 24, /*padded=*/true);
        QVERIFY(model);
        const int64_t s = model->vocabSize(); // 20 residues + pad
        QCOMPARE(s, int64_t(21));
        auto tokens = torch::randint(0, s + 1, {5, 24}, torch::kLong); // s = the mask
        tokens[1].fill_(s);                                           // a row all masked
        const auto t = torch::rand({5});
        torch::Tensor full;
        {
            torch::NoGradGuard noGrad;
            full = model->forward(tokens, t);
            QCOMPARE(full.sizes(), (std::vector<int64_t>{5, 24, s}));
        }
        // Against the whole vocabulary's logits, framed and mapped by hand.
        {
            torch::NoGradGuard noGrad;
            auto v = esmVocabulary(readPublishedWeights(folder.toStdString())->tokens, true).value();
            auto idOf = v.realTokenIds();
            idOf.push_back(v.maskId);
            const auto map = torch::tensor(idOf);
            auto ids = torch::cat({torch::zeros({5, 1}, torch::kLong), map.index_select(0, tokens.flatten()).view({5, 24}),
                                   torch::full({5, 1}, 2, torch::kLong)},
                                  1);
            const auto whole = model->modelLogits(ids).narrow(1, 1, 24).index_select(2, torch::tensor(v.realTokenIds()));
            QVERIFY((whole - full).abs().max().item<double>() < 1e-5);
        }
        const auto positions = tokens.flatten().eq(s).nonzero().flatten();
        QVERIFY(positions.numel() > 24);
        const auto at = model->forwardAt(tokens, t, positions);
        const auto expected = full.reshape({-1, s}).index_select(0, positions);
        QVERIFY2((at - expected).abs().max().item<double>() < 1e-5,
                 qPrintable(QString::number((at - expected).abs().max().item<double>())));

        // Gradients: d2dpo's kernels (float) against the same loss in float64 through the
        // generic operators (the kernels take float only on the CPU, float64 runs torch's own).
        auto reference = std::static_pointer_cast<EsmDenoiser>(model->deepCopy());
        reference->to(torch::kDouble);
        const auto weights = torch::randn({positions.numel(), s});
        model->forwardAt(tokens, t, positions).mul(weights).sum().backward();
        reference->forwardAt(tokens, t, positions).mul(weights.to(torch::kDouble)).sum().backward();
        const auto ours = model->named_parameters();
        const auto theirs = reference->named_parameters();
        double worst = 0;
        for (const auto& item : ours) {
            const auto& g = item.value().grad();
            const auto& r = theirs[item.key()].grad();
            QVERIFY2(g.defined() && r.defined(), item.key().c_str());
            worst = std::max(worst, ((g.to(torch::kDouble) - r).abs().max() / (1 + r.abs().max())).item<double>());
        }
        qInfo("largest relative gradient gap: %.2e", worst);
        QVERIFY(worst < 1e-4);
    }

    /// Low-rank adapters on the native network: the adapted model starts equal to it, only A and B
    /// learn, the subset forward carries the adapters, and the merged model (what a checkpoint and
    /// an export hold) computes what the adapted one does, under the file's own key names.
    void lowRankAdaptersTrainAndMerge()
    {
        const QString folder = path("lora");
        QVERIFY(runPython({"write", folder, "--size", "tiny", "--seed", "5"}));
        auto model = load(folder, 12);
        QVERIFY(model);
        auto adapted = LoraDenoiser::adapt(model, {4, "attention\\.self\\.(query|value)\\.weight$", 3});
        QVERIFY2(adapted, adapted ? "" : adapted.error().c_str());
        QCOMPARE(adapted.value()->targets().size(), size_t(4)); // 2 layers x query, value
        QCOMPARE(adapted.value()->kind(), std::string("esm"));
        const auto tokens = torch::randint(0, 21, {4, 12}, torch::kLong);
        const auto t = torch::zeros({4});
        {
            torch::NoGradGuard noGrad;
            QVERIFY(torch::allclose(adapted.value()->forward(tokens, t), model->forward(tokens, t)));
        }
        // A few Adam steps on the adapters move the model; its own weights stay W0.
        const auto before = model->parameterSlot("esm.encoder.layer.0.attention.self.query.weight").clone();
        torch::optim::Adam adam(adapted.value()->parameters(), torch::optim::AdamOptions(1e-2));
        for (int i = 0; i < 5; ++i) {
            adam.zero_grad();
            adapted.value()->forward(tokens, t).logsumexp(-1).mean().backward();
            adam.step();
        }
        QVERIFY(torch::equal(model->parameterSlot("esm.encoder.layer.0.attention.self.query.weight"), before));
        const auto positions = torch::arange(0, 48, 5);
        torch::NoGradGuard noGrad;
        const auto full = adapted.value()->forward(tokens, t);
        QVERIFY((full - model->forward(tokens, t)).abs().max().item<double>() > 1e-4);
        QVERIFY((adapted.value()->forwardAt(tokens, t, positions) - full.reshape({-1, 20}).index_select(0, positions))
                    .abs().max().item<double>() < 1e-5);
        auto merged = adapted.value()->merged();
        QVERIFY((merged->forward(tokens, t) - full).abs().max().item<double>() < 1e-5);
        QVERIFY(merged->named_parameters().contains("esm.encoder.layer.1.attention.self.value.weight"));
        QVERIFY(adapted.value()->resumeFrom(*merged));
    }

    /// bf16 products (--precision bf16) on the 8M shape at 150 residues: the log-probabilities at
    /// masked positions, what the D2-DPO loss is made of, stay within 0.15 of float32's (measured:
    /// 0.05-0.07 at most, about 0.01 on average; bench/esm_native.sh prints it per shape), and they do move
    /// (the products were rounded).
    void bf16ProductsStayNearFloat32()
    {
        torch::manual_seed(4);
        const QString folder = path("bf16");
        QVERIFY(runPython({"write", folder, "--size", "8M", "--seed", "4"}));
        auto model = load(folder, 150);
        QVERIFY(model);
        const int64_t s = model->vocabSize();
        auto tokens = torch::randint(0, s, {4, 150}, torch::kLong);
        const auto masked = torch::rand({4, 150}).lt(0.5);
        tokens.masked_fill_(masked, s);
        const auto t = torch::full({4}, 0.5);
        torch::NoGradGuard noGrad;
        const auto at = [&](Precision precision) {
            const MatmulPrecisionScope scope(precision);
            return torch::log_softmax(model->forward(tokens, t), -1).index({masked});
        };
        const auto gaps = (at(Precision::BFloat16) - at(Precision::Float32)).abs();
        const double gap = gaps.max().item<double>();
        qInfo("8M, 150 residues: |log p at bf16 - log p at float32| at most %.2e, on average %.2e", gap,
              gaps.mean().item<double>());
        QVERIFY2(gap < 0.15, qPrintable(QString::number(gap)));
        QVERIFY(gap > 1e-5);
    }

    void checkpointRoundTrip()
    {
        const QString folder = path("round");
        QVERIFY(runPython({"write", folder, "--size", "tiny", "--seed", "3"}));
        auto model = load(folder, 16);
        QVERIFY(model);
        auto weights = readPublishedWeights(folder.toStdString());
        ModelSpec spec;
        spec.task.name = "sequences";
        spec.task.symbols = kAminoAcids;
        spec.task.length = 16;
        spec.task.minLength = 16;
        spec.task.validity = "symbols";
        spec.model.kind = "esm";
        spec.model.vocabulary = esmVocabulary(weights->tokens, false).value();
        spec.model.vocabulary.size = 33;
        spec.model.parameters = parameterCount(model);
        spec.model.source = "round";
        spec.model.architecture = weights->architecture;
        spec.model.weightsConfig = weights->configJson;
        spec.model.modelTokens = weights->tokens;
        QVERIFY2(validate(spec), validate(spec) ? "" : validate(spec).error().c_str());
        CheckpointInfo info{newCheckpointId(), "", "pretrained", spec, "{}", "{}", 0, utcNow()};
        const std::string file = path("round.d2dpo").toStdString();
        QVERIFY(saveCheckpoint(file, model, info));
        auto loaded = loadCheckpoint(file, torch::kCPU);
        QVERIFY2(loaded, loaded ? "" : loaded.error().c_str());
        QCOMPARE(loaded->model->kind(), std::string("esm"));
        const auto tokens = torch::randint(0, 21, {3, 16}, torch::kLong);
        torch::NoGradGuard noGrad;
        QVERIFY(torch::equal(loaded->model->forward(tokens, torch::zeros({3})), model->forward(tokens, torch::zeros({3}))));
        // The passengers (contact head, inv_freq) travel too, as read.
        QCOMPARE(loaded->model->named_buffers().size(), model->named_buffers().size());
        QVERIFY(model->named_buffers().size() > 0);
    }

    void refusals()
    {
        const QString good = path("good");
        QVERIFY(runPython({"write", good, "--size", "tiny"}));
        const auto refusal = [](const QString& folder, int64_t length = 16) -> std::string {
            auto weights = readPublishedWeights(folder.toStdString());
            if (!weights)
                return weights.error();
            auto architecture = esmArchitecture(weights->configJson);
            if (!architecture)
                return architecture.error();
            auto vocabulary = esmVocabulary(weights->tokens, false);
            if (!vocabulary)
                return vocabulary.error();
            auto model = EsmDenoiser::fromWeights(architecture.value(), vocabulary.value(), length, weights->prefix,
                                                  std::move(weights->tensors));
            return model ? std::string("(read)") : model.error();
        };
        const auto copyOf = [&](const QString& name) {
            const QString to = path(name);
            QDir().mkpath(to);
            for (const char* file : {"model.safetensors", "config.json", "vocab.txt"})
                QFile::copy(good + "/" + file, to + "/" + file);
            return to;
        };
        const auto expect = [](const std::string& got, const char* phrase) {
            QVERIFY2(got.find(phrase) != std::string::npos, (std::string(phrase) + " | " + got).c_str());
        };
        QCOMPARE(refusal(good), std::string("(read)"));
        expect(refusal(good, 2000), "max_position_embeddings");

        QString pickled = copyOf("pickled");
        QFile::rename(pickled + "/model.safetensors", pickled + "/pytorch_model.bin");
        expect(refusal(pickled), "is a pickle, which runs code when loaded");
        expect(refusal(pickled + "/pytorch_model.bin"), "is a pickle");

        const auto rewriteConfig = [&](const QString& name, const std::function<void(nlohmann::json&)>& edit) {
            const QString folder = copyOf(name);
            auto j = nlohmann::json::parse(readFile(folder + "/config.json"));
            edit(j);
            QFile::remove(folder + "/config.json");
            std::ofstream(folder.toStdString() + "/config.json") << j.dump();
            return folder;
        };
        expect(refusal(rewriteConfig("bert", [](auto& j) { j["model_type"] = "bert"; })), "d2dpo import --torchscript");
        expect(refusal(rewriteConfig("absolute", [](auto& j) { j["position_embedding_type"] = "absolute"; })),
               "ESM-1b");
        expect(refusal(rewriteConfig("widened", [](auto& j) { j["hidden_size"] = 128; })), "wrong shape");
        expect(refusal(rewriteConfig("huge", [](auto& j) { j["hidden_size"] = 1 << 30; })), "hidden_size");
        expect(refusal(rewriteConfig("oddheads", [](auto& j) { j["num_attention_heads"] = 3; })), "heads");
        expect(refusal(rewriteConfig("deeper", [](auto& j) { j["num_hidden_layers"] = 3; })), "is missing");

        const auto rewriteWeights = [&](const QString& name, const std::function<void(SafetensorsContents&)>& edit) {
            const QString folder = copyOf(name);
            auto contents = readSafetensors(readFile(folder + "/model.safetensors")).value();
            edit(contents);
            std::string bytes;
            appendSafetensors(bytes, contents.tensors, contents.metadata);
            QFile::remove(folder + "/model.safetensors");
            std::ofstream(folder.toStdString() + "/model.safetensors", std::ios::binary) << bytes;
            return folder;
        };
        expect(refusal(rewriteWeights("extra", [](auto& c) { c.tensors.emplace_back("classifier.weight", torch::zeros({2})); })),
               "does not have");
        expect(refusal(rewriteWeights("nan", [](auto& c) { c.tensors[0].second[0][0] = NAN; })), "NaN");
        expect(refusal(rewriteWeights("ints", [](auto& c) { c.tensors[0].second = c.tensors[0].second.to(torch::kInt32); })),
               "wrong type");

        QString truncated = copyOf("truncated");
        QFile::resize(truncated + "/model.safetensors", 1000);
        expect(refusal(truncated), "model.safetensors");
        QString novocab = copyOf("novocab");
        QFile::remove(novocab + "/vocab.txt");
        expect(refusal(novocab), "vocab.txt");
        QString sharded = path("sharded");
        QDir().mkpath(sharded);
        QFile::copy(good + "/config.json", sharded + "/config.json");
        std::ofstream(sharded.toStdString() + "/model.safetensors.index.json") << "{}";
        expect(refusal(sharded), "sharded");
    }
};

QTEST_GUILESS_MAIN(TestEsm)
#include "tst_esm.moc"
