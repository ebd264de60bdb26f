// SPDX-License-Identifier: GPL-3.0-or-later
// MDLM's DiT runs natively from its published weights (model/ditdenoiser.h), held to a reference
// written in Python from kuleshov-group/mdlm's DIT (python/mdlm_published.py, in float64) on random
// weights the reference writes in the published layout: logits within 1e-4 from a tiny network to
// MDLM's released width (12 blocks of 768) at 50 to 1024 positions, with time conditioning on and
// off, under the release's "backbone." keys and a bare DIT's. Then the network's own consistency
// (the denoiser's times as MDLM's sigma, the subset forward, gradients through d2dpo's kernels
// against LibTorch's generic operators, low-rank adapters), a checkpoint round trip, and every file
// it must refuse.
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
#include "model/ditdenoiser.h"
#include "model/loradenoiser.h"
#include "model/publishedarchitectures.h"
#include "support/clirun.h"
#include "support/filebytes.h"

using namespace d2dpo;

namespace {

const QString kPython = QStringLiteral("/usr/bin/python3");
const QString kScript = QStringLiteral(D2DPO_SOURCE_DIR "/python/mdlm_published.py");

bool runPython(const QStringList& arguments, QString* err = nullptr)
{
    QProcess process;
    process.start(kPython, QStringList{kScript} + arguments);
    const auto run = d2dpo::test::finishProcess(process, 900000);
    if (err)
        *err = run.err;
    return run.exitCode == 0;
}

std::string readFile(const QString& path) { return d2dpo::test::readAll(path.toStdString()); }

/// What the import reads and builds for a task of `length` letters; the error when it refuses.
Result<std::shared_ptr<SlottedDenoiser>> build(const QString& folder, int64_t length, bool padded = false)
{
    auto weights = readPublishedWeights(folder.toStdString());
    if (!weights)
        return makeError(weights.error());
    auto vocabulary = publishedVocabulary(weights->architecture, weights->configJson, weights->tokens, padded);
    if (!vocabulary)
        return makeError(vocabulary.error());
    return publishedNetwork(weights->architecture, weights->configJson, vocabulary.value(), length, weights->prefix,
                            std::move(weights->tensors));
}

std::shared_ptr<DitDenoiser> load(const QString& folder, int64_t length, bool padded = false)
{
    auto model = build(folder, length, padded);
    if (!model) {
        qWarning("%s", model.error().c_str());
        return nullptr;
    }
    model.value()->eval();
    return std::dynamic_pointer_cast<DitDenoiser>(model.value());
}

/// The largest |ours - reference| over Python's logits for its ids and sigmas.
double largestGap(DitDenoiser& model, const QString& referencePath)
{
    auto reference = readSafetensors(readFile(referencePath));
    if (!reference)
        return 1e9;
    torch::Tensor ids, sigma, logits;
    for (auto& [name, tensor] : reference->tensors)
        (name == "ids" ? ids : name == "sigma" ? sigma : logits) = tensor;
    torch::NoGradGuard noGrad;
    const auto ours = model.modelLogits(ids, sigma.to(torch::kFloat32)).to(torch::kDouble);
    if (ours.sizes() != logits.sizes())
        return 1e9;
    return (ours - logits).abs().max().item<double>();
}

} // namespace

class TestMdlm : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString path(const QString& name) const { return m_dir.filePath(name); }

private Q_SLOTS:
    void initTestCase()
    {
        torch::manual_seed(0);
        QVERIFY(m_dir.isValid());
        if (!runPython({QStringLiteral("logits"), QStringLiteral("--help")}))
            QSKIP("/usr/bin/python3 with torch (Debian's python3-torch) is not installed");
    }

    void logitsEqualTheReference_data()
    {
        QTest::addColumn<QStringList>("write");
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("length");
        QTest::newRow("tiny, 50 positions") << QStringList{"--size", "tiny"} << 3 << 50;
        QTest::newRow("tiny, time-conditioned") << QStringList{"--size", "tiny", "--time-conditioning"} << 3 << 40;
        QTest::newRow("tiny, a bare DIT's keys") << QStringList{"--size", "tiny", "--prefix", ""} << 2 << 30;
        QTest::newRow("4 blocks of 256, 256 positions") << QStringList{"--size", "medium-narrow"} << 2 << 256;
        QTest::newRow("MDLM's width, 128 positions") << QStringList{"--size", "small", "--time-conditioning"} << 2 << 128;
        QTest::newRow("MDLM's width, 1024 positions") << QStringList{"--size", "small", "--seed", "2"} << 1 << 1024;
    }
    void logitsEqualTheReference()
    {
        QFETCH(QStringList, write);
        QFETCH(int, batch);
        QFETCH(int, length);
        const QString folder = path(QStringLiteral("w%1").arg(QTest::currentDataTag()).remove(QLatin1Char(' ')));
        QString err;
        QVERIFY2(runPython(QStringList{"write", folder} + write, &err), qPrintable(err));
        const QString reference = folder + "/reference.safetensors";
        QVERIFY2(runPython({"logits", folder, reference, "--batch", QString::number(batch), "--length",
                            QString::number(length)},
                           &err),
                 qPrintable(err));
        auto model = load(folder, length);
        QVERIFY(model);
        QCOMPARE(model->kind(), std::string("mdlm"));
        QCOMPARE(model->timeConditioned(), write.contains("--time-conditioning"));
        const double gap = largestGap(*model, reference);
        qInfo("%s: largest |logit - reference| %.2e", QTest::currentDataTag(), gap);
        QVERIFY2(gap < 1e-4, qPrintable(QString::number(gap)));
        QCOMPARE(model->prefix(), std::string(write.contains("") ? "" : "backbone."));
        QCOMPARE(readPublishedWeights(folder.toStdString())->architecture, std::string("MDLM"));
    }

    /// forward() is modelLogits at MDLM's sigma for the denoiser's t, over the task's letters;
    /// without time conditioning it does not read t; forwardAt() is forward()'s rows; and the
    /// gradients through d2dpo's kernels equal LibTorch's generic operators' in float64.
    void subsetForwardAndGradientsAgree()
    {
        const QString folder = path("tiny");
        QVERIFY(runPython({"write", folder, "--size", "tiny", "--seed", "7", "--time-conditioning"}));
        auto model = load(folder, 24, /*padded=*/true);
        QVERIFY(model);
        const int64_t s = model->vocabSize(); // 26 letters + pad
        QCOMPARE(s, int64_t(27));
        auto tokens = torch::randint(0, s + 1, {5, 24}, torch::kLong); // s = the mask
        tokens[1].fill_(s);
        const auto t = torch::rand({5});
        const auto sigma = model->sigmaAt(t);
        // By hand: all masked (t = 0) is MDLM's time 1, sigma = -ln(1e-3) = 6.907755; half
        // masked is -ln(1 - 0.999 / 2) = 0.692148; data (t = 1) is sigma 0.
        const auto byHand = model->sigmaAt(torch::tensor({0.0f, 0.5f, 1.0f}));
        QVERIFY2(torch::allclose(byHand, torch::tensor({6.907755f, 0.692148f, 0.0f}), 1e-5, 1e-6),
                 qPrintable(QString::number(byHand[1].item<double>(), 'g', 8)));
        torch::Tensor full;
        {
            torch::NoGradGuard noGrad;
            full = model->forward(tokens, t);
            QCOMPARE(full.sizes(), (std::vector<int64_t>{5, 24, s}));
            auto weights = readPublishedWeights(folder.toStdString());
            auto v = publishedVocabulary("MDLM", weights->configJson, weights->tokens, true).value();
            QCOMPARE(v.maskId, int64_t(4)); // text8's [MASK]
            auto idOf = v.realTokenIds();
            idOf.push_back(v.maskId);
            const auto ids = torch::tensor(idOf).index_select(0, tokens.flatten()).view({5, 24});
            const auto whole = model->modelLogits(ids, sigma).index_select(2, torch::tensor(v.realTokenIds()));
            QVERIFY((whole - full).abs().max().item<double>() < 1e-5);
            // time matters when it is on
            QVERIFY((model->forward(tokens, 1 - t) - full).abs().max().item<double>() > 1e-3);
        }
        const auto positions = tokens.flatten().eq(s).nonzero().flatten();
        QVERIFY(positions.numel() > 24);
        const auto at = model->forwardAt(tokens, t, positions);
        const auto expected = full.reshape({-1, s}).index_select(0, positions);
        QVERIFY2((at - expected).abs().max().item<double>() < 1e-5,
                 qPrintable(QString::number((at - expected).abs().max().item<double>())));

        auto reference = std::static_pointer_cast<DitDenoiser>(model->deepCopy());
        reference->to(torch::kDouble);
        const auto weights = torch::randn({positions.numel(), s});
        model->forwardAt(tokens, t, positions).mul(weights).sum().backward();
        reference->forwardAt(tokens, t.to(torch::kDouble), positions).mul(weights.to(torch::kDouble)).sum().backward();
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

        // Time conditioning off: sigma is 0 whatever t is, as MDLM's _process_sigma makes it.
        const QString untimed = path("untimed");
        QVERIFY(runPython({"write", untimed, "--size", "tiny", "--seed", "7"}));
        auto still = load(untimed, 24, true);
        QVERIFY(still && !still->timeConditioned());
        torch::NoGradGuard noGrad;
        QVERIFY(torch::equal(still->sigmaAt(t), torch::zeros({5})));
        QVERIFY(torch::equal(still->forward(tokens, t), still->forward(tokens, 1 - t)));
    }

    /// Low-rank adapters on the DiT's attention: they start at the model, learn alone, and merge
    /// into the file's own key names.
    void lowRankAdaptersTrainAndMerge()
    {
        const QString folder = path("lora");
        QVERIFY(runPython({"write", folder, "--size", "tiny", "--seed", "5"}));
        auto model = load(folder, 12);
        QVERIFY(model);
        auto adapted = LoraDenoiser::adapt(model, {4, "attn_(qkv|out)\\.weight$", 3});
        QVERIFY2(adapted, adapted ? "" : adapted.error().c_str());
        QCOMPARE(adapted.value()->targets().size(), size_t(4)); // 2 blocks x qkv, out
        QCOMPARE(adapted.value()->kind(), std::string("mdlm"));
        const auto tokens = torch::randint(0, 27, {4, 12}, torch::kLong);
        const auto t = torch::zeros({4});
        {
            torch::NoGradGuard noGrad;
            QVERIFY(torch::allclose(adapted.value()->forward(tokens, t), model->forward(tokens, t)));
        }
        const std::string qkv = "backbone.blocks.0.attn_qkv.weight";
        const auto before = model->parameterSlot(qkv).clone();
        torch::optim::Adam adam(adapted.value()->parameters(), torch::optim::AdamOptions(1e-2));
        for (int i = 0; i < 5; ++i) {
            adam.zero_grad();
            adapted.value()->forward(tokens, t).logsumexp(-1).mean().backward();
            adam.step();
        }
        QVERIFY(torch::equal(model->parameterSlot(qkv), before));
        torch::NoGradGuard noGrad;
        const auto full = adapted.value()->forward(tokens, t);
        QVERIFY((full - model->forward(tokens, t)).abs().max().item<double>() > 1e-4);
        const auto positions = torch::arange(0, 48, 5);
        QVERIFY((adapted.value()->forwardAt(tokens, t, positions) - full.reshape({-1, 26}).index_select(0, positions))
                    .abs().max().item<double>() < 1e-5);
        auto merged = adapted.value()->merged();
        QVERIFY((merged->forward(tokens, t) - full).abs().max().item<double>() < 1e-5);
        QVERIFY(merged->named_parameters().contains("backbone.blocks.1.attn_out.weight"));
    }

    void checkpointRoundTrip()
    {
        const QString folder = path("round");
        QVERIFY(runPython({"write", folder, "--size", "tiny", "--seed", "3", "--time-conditioning"}));
        auto model = load(folder, 16);
        QVERIFY(model);
        auto weights = readPublishedWeights(folder.toStdString());
        ModelSpec spec;
        spec.task.name = "sequences";
        spec.task.symbols = "abcdefghijklmnopqrstuvwxyz";
        spec.task.length = 16;
        spec.task.minLength = 16;
        spec.task.validity = "symbols";
        spec.model.kind = publishedKind("MDLM");
        QCOMPARE(spec.model.kind, std::string("mdlm"));
        spec.model.vocabulary = publishedVocabulary("MDLM", weights->configJson, weights->tokens, false).value();
        spec.model.parameters = parameterCount(model);
        spec.model.source = "round";
        spec.model.architecture = weights->architecture;
        spec.model.keyPrefix = weights->prefix;
        spec.model.weightsConfig = weights->configJson;
        spec.model.modelTokens = weights->tokens;
        QVERIFY2(validate(spec), validate(spec) ? "" : validate(spec).error().c_str());
        QCOMPARE(spec.model.parameters, publishedShape("MDLM", weights->configJson)->parameters);
        CheckpointInfo info{newCheckpointId(), "", "pretrained", spec, "{}", "{}", 0, utcNow()};
        const std::string file = path("round.d2dpo").toStdString();
        QVERIFY(saveCheckpoint(file, model, info));
        auto loaded = loadCheckpoint(file, torch::kCPU);
        QVERIFY2(loaded, loaded ? "" : loaded.error().c_str());
        QCOMPARE(loaded->model->kind(), std::string("mdlm"));
        QVERIFY(loaded->model->timeConditioned());
        const auto tokens = torch::randint(0, 27, {3, 16}, torch::kLong);
        const auto t = torch::rand({3});
        torch::NoGradGuard noGrad;
        QVERIFY(torch::equal(loaded->model->forward(tokens, t), model->forward(tokens, t)));
        QCOMPARE(loaded->model->named_buffers().size(), size_t(1)); // rotary_emb.inv_freq, as read
    }

    void refusals()
    {
        const QString good = path("good");
        QVERIFY(runPython({"write", good, "--size", "tiny"}));
        const auto refusal = [](const QString& folder, int64_t length = 16) -> std::string {
            auto model = build(folder, length);
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
        expect(refusal(good, 2000), "model_length");

        const auto rewriteConfig = [&](const QString& name, const std::function<void(nlohmann::json&)>& edit) {
            const QString folder = copyOf(name);
            auto j = nlohmann::json::parse(readFile(folder + "/config.json"));
            edit(j);
            QFile::remove(folder + "/config.json");
            std::ofstream(folder.toStdString() + "/config.json") << j.dump();
            return folder;
        };
        expect(refusal(rewriteConfig("bd3lm", [](auto& j) { j["cross_attn"] = true; })), "BD3LM");
        expect(refusal(rewriteConfig("noadaln", [](auto& j) { j["adaln"] = false; })), "adaln");
        expect(refusal(rewriteConfig("typeless", [](auto& j) { j["model_type"] = 7; })), "model_type");
        expect(refusal(rewriteConfig("widened", [](auto& j) { j["hidden_dim"] = 128; })), "wrong shape");
        expect(refusal(rewriteConfig("huge", [](auto& j) { j["hidden_dim"] = 1 << 30; })), "hidden_dim");
        expect(refusal(rewriteConfig("oddheads", [](auto& j) { j["n_heads"] = 3; })), "heads");
        expect(refusal(rewriteConfig("deeper", [](auto& j) { j["n_blocks"] = 3; })), "is missing");
        expect(refusal(rewriteConfig("othermask", [](auto& j) { j["mask_token_id"] = 6; })), "mask_token_id");
        // A config that names the mask serves a vocab.txt without [MASK]
        const QString configMask = rewriteConfig("configmask", [](auto& j) { j["mask_token_id"] = 4; });
        {
            std::string text = readFile(configMask + "/vocab.txt");
            text.replace(text.find("[MASK]"), 6, "[MASQUE]");
            QFile::remove(configMask + "/vocab.txt");
            std::ofstream(configMask.toStdString() + "/vocab.txt") << text;
        }
        QCOMPARE(refusal(configMask), std::string("(read)"));
        expect(refusal(rewriteConfig("flagtext", [](auto& j) { j["cross_attn"] = "yes"; })), "true or false");

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
        expect(refusal(rewriteWeights("extra", [](auto& c) { c.tensors.emplace_back("backbone.ema.weight", torch::zeros({2})); })),
               "does not have");
        expect(refusal(rewriteWeights("nan", [](auto& c) { c.tensors[0].second.view(-1)[0] = NAN; })), "NaN");

        // The vocabulary: none beside the weights needs a contract; one without [MASK] must leave
        // exactly one id after its tokens; a varying length needs [PAD].
        QString novocab = copyOf("novocab");
        QFile::remove(novocab + "/vocab.txt");
        expect(refusal(novocab), "vocabulary contract");
        QString nomask = copyOf("nomaskvocab");
        {
            QFile::remove(nomask + "/vocab.txt");
            std::ofstream(nomask.toStdString() + "/vocab.txt") << "a\nb\nc\n";
        }
        expect(refusal(nomask), "no [MASK] token");
        auto weights = readPublishedWeights(good.toStdString());
        auto appended = publishedVocabulary("MDLM", R"({"model_type":"mdlm","vocab_size":4,"model_length":8,"hidden_dim":8,
            "cond_dim":4,"n_blocks":1,"n_heads":2})", {"a", "b", "c"}, false);
        QVERIFY2(appended, appended ? "" : appended.error().c_str());
        QCOMPARE(appended->maskId, int64_t(3)); // MDLM appends [MASK] after the tokenizer's ids
        QCOMPARE(appended->symbols, std::string("abc"));
        expect(publishedVocabulary("MDLM", weights->configJson, {"a", "b", "[MASK]"}, true).error(), "[PAD]");
    }
};

QTEST_GUILESS_MAIN(TestMdlm)
#include "tst_mdlm.moc"
