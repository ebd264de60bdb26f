// SPDX-License-Identifier: GPL-3.0-or-later
// Low-rank adapters on a model brought in as TorchScript: they start as the model, only A and B
// learn while the model's weights and the reference (which shares them) stay as they were, the
// merged model (what checkpoints hold) computes what the adapted one does, and what cannot be
// adapted is refused with a sentence.
#include <QTemporaryDir>

#include <sstream>

#include <torch/script.h>

#include "support/listenerrecorder.h"
#include "support/testsupport.h"

#include "base/modelvocabulary.h"
#include "diffusion/maskingnoise.h"
#include "io/checkpoint.h"
#include "model/device.h"
#include "model/loradenoiser.h"
#include "model/torchscriptdenoiser.h"
#include "model/transformerdenoiser.h"
#include "tasks/binaryintegerstask.h"
#include "train/dpotrainer.h"

using namespace d2dpo;

namespace {

constexpr int64_t kLength = 6;

/// A denoiser over ids 0, 1 (the symbols) and 2 (the mask), scripted here: an embedding table
/// (not adapted: its name says embed), a projection weight (adapted) and a bias.
std::shared_ptr<TorchScriptDenoiser> scriptedModel()
{
    torch::manual_seed(4);
    torch::jit::Module module("__torch__.Tiny");
    module.register_parameter("embed_table", torch::randn({3, 8}), false);
    module.register_parameter("proj_weight", torch::randn({3, 8}) * 0.3, false);
    module.register_parameter("proj_bias", torch::zeros({3}), false);
    module.define("def forward(self, tokens: Tensor, t: Tensor) -> Tensor:\n"
                  "    x = self.embed_table[tokens] + t[:, None, None]\n"
                  "    return torch.matmul(x, self.proj_weight.t()) + self.proj_bias\n");
    std::ostringstream archive;
    module.save(archive);
    auto vocabulary = parseModelVocabulary("{\"symbols\": {\"0\": 0, \"1\": 1}, \"mask\": 2}");
    auto loaded = TorchScriptDenoiser::load(archive.str(), vocabulary.value(), kLength);
    if (!loaded)
        qFatal("%s", loaded.error().c_str());
    return loaded.value();
}

ModelSpec spec()
{
    ModelSpec s = test::tinySpec(kLength);
    s.model.kind = "torchscript";
    s.model.vocabulary = parseModelVocabulary("{\"symbols\": {\"0\": 0, \"1\": 1}, \"mask\": 2}").value();
    s.model.vocabulary.size = 3;
    s.model.parameters = 2 * 3 * 8 + 3;
    return s;
}

double largestGap(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); }

} // namespace

class TestLora final : public QObject {
    Q_OBJECT

    const torch::Tensor m_tokens = torch::randint(0, 3, {5, kLength}, torch::kLong);
    const torch::Tensor m_t = torch::rand({5});

private Q_SLOTS:
    void adaptersStartAsTheModelAndAdaptOnlyItsMatrices()
    {
        auto base = scriptedModel();
        const auto before = base->forward(m_tokens, m_t).detach();
        auto adapted = LoraDenoiser::adapt(base, {2, LoraOptions{}.targets, 7});
        QVERIFY2(adapted.ok(), adapted.ok() ? "" : adapted.error().c_str());
        QCOMPARE(adapted.value()->targets(), std::vector<std::string>{"proj_weight"});
        QCOMPARE(adapted.value()->parameters().size(), size_t(2));
        QCOMPARE(adapted.value()->trainedCount(), int64_t(2 * 8 + 3 * 2));
        QCOMPARE(largestGap(adapted.value()->forward(m_tokens, m_t), before), 0.0);

        auto none = LoraDenoiser::adapt(scriptedModel(), {2, "attention", 7});
        QVERIFY(!none.ok());
        QVERIFY2(none.error().find("its matrices: embed_table, proj_weight") != std::string::npos, none.error().c_str());
        auto broken = LoraDenoiser::adapt(scriptedModel(), {2, "(", 7});
        QVERIFY(!broken.ok() && broken.error().find("not a valid regular expression") != std::string::npos);
    }

    void onlyTheAdaptersLearnAndTheReferenceKeepsTheModel()
    {
        auto base = scriptedModel();
        const auto original = base->forward(m_tokens, m_t).detach();
        const auto weights = base->named_parameters();
        std::map<std::string, torch::Tensor> kept;
        for (const auto& item : weights)
            kept[item.key()] = item.value().detach().clone();
        BinaryIntegersTask task(kLength);
        MaskingNoise noise(2, 0.0);
        DpoConfig dpo = test::tinyDpo(20);
        dpo.loraRank = 2;
        dpo.learningRate = 1e-2;
        DpoTrainer trainer(base, task, noise, DpoTrainerOptions(spec(), dpo).schedule(test::tinySchedule()).seed(3));
        auto generator = makeGenerator(8, torch::kCPU);
        const auto [winners, losers] = task.rulePairs(256, generator, torch::kCPU).value();
        trainer.setPreferences(winners, losers);
        double first = 0, last = 0;
        for (int i = 0; i < 20; ++i) {
            const double loss = trainer.trainStep(false).loss;
            (i == 0 ? first : last) = loss;
        }
        QVERIFY2(last < first, qPrintable(QString("%1 -> %2").arg(first).arg(last)));
        // The model's own weights are untouched, the reference is still the model, the policy moved.
        for (const auto& item : base->named_parameters())
            QVERIFY2(torch::equal(item.value(), kept[item.key()]), item.key().c_str());
        torch::NoGradGuard noGrad;
        QCOMPARE(largestGap(trainer.reference()->forward(m_tokens, m_t), original), 0.0);
        QVERIFY(largestGap(trainer.policy()->forward(m_tokens, m_t), original) > 1e-4);
        QCOMPARE(trainer.policy()->parameters().size(), size_t(2));
    }

    void theMergedModelComputesWhatTheAdaptedOneDoesAndIsWhatACheckpointHolds()
    {
        auto base = scriptedModel();
        auto adapted = LoraDenoiser::adapt(base, {3, LoraOptions{}.targets, 7}).value();
        {
            torch::NoGradGuard noGrad;
            for (auto& p : adapted->parameters())
                p.add_(torch::randn_like(p) * 0.1); // B no longer zero
        }
        const auto expected = adapted->forward(m_tokens, m_t).detach();
        auto merged = adapted->merged();
        QVERIFY(largestGap(merged->forward(m_tokens, m_t), expected) < 1e-6);
        QVERIFY(merged->parameters().front().requires_grad());
        QTemporaryDir dir;
        const std::string path = dir.filePath("adapted.d2dpo").toStdString();
        CheckpointInfo info{newCheckpointId(), "", "d2dpo", spec(), "{}", "{}", 1, utcNow()};
        QVERIFY(saveCheckpoint(path, adapted, info).ok());
        auto loaded = loadCheckpoint(path, torch::kCPU);
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().c_str());
        QCOMPARE(loaded->model->kind(), std::string("torchscript"));
        QVERIFY(largestGap(loaded->model->forward(m_tokens, m_t), expected) < 1e-6);
    }

    void aModelOfItsOwnKindIsRefusedAdaptersWithASentence()
    {
        BinaryIntegersTask task(kLength);
        MaskingNoise noise(2, 0.0);
        DpoConfig dpo = test::tinyDpo(2);
        dpo.loraRank = 4;
        DpoTrainer trainer(makeDenoiser(test::tinySpec(kLength), 2, torch::kCPU), task, noise,
                           DpoTrainerOptions(test::tinySpec(kLength), dpo).schedule(test::tinySchedule()));
        auto generator = makeGenerator(8, torch::kCPU);
        const auto [winners, losers] = task.rulePairs(64, generator, torch::kCPU).value();
        trainer.setPreferences(winners, losers);
        test::ListenerRecorder recorder;
        StopToken stop;
        const FinishedEvent finished = trainer.run(recorder, stop);
        QCOMPARE(finished.status, RunStatus::Failed);
        QVERIFY2(finished.error.find("low-rank adapters are for models brought in as TorchScript") != std::string::npos,
                 finished.error.c_str());
    }
};

QTEST_GUILESS_MAIN(TestLora)
#include "tst_lora.moc"
