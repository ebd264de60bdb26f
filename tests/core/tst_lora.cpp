// SPDX-License-Identifier: GPL-3.0-or-later
// Low-rank adapters on a model brought in as TorchScript: they start as the model, only A and B
// learn while the model's weights and the reference (which shares them) stay as they were, the
// merged model (what checkpoints hold) computes what the adapted one does, a stopped run resumes
// with its adapters recovered from that merged model, and what cannot be adapted is refused with a
// sentence.
#include <QTemporaryDir>

#include <sstream>

#include <torch/script.h>

#include "support/listenerrecorder.h"
#include "support/testsupport.h"
#include "support/tinyscripted.h"

#include "base/modelvocabulary.h"
#include "diffusion/maskingnoise.h"
#include "io/checkpoint.h"
#include "jobs/dpojob.h"
#include "jobs/dporesume.h"
#include "model/device.h"
#include "model/loradenoiser.h"
#include "model/torchscriptdenoiser.h"
#include "model/transformerdenoiser.h"
#include "tasks/binaryintegerstask.h"
#include "train/dpotrainer.h"

using namespace d2dpo;

namespace {

constexpr int64_t kLength = 6;

std::shared_ptr<TorchScriptDenoiser> scriptedModel() { return test::tinyScriptedModel(kLength); }

ModelSpec spec() { return test::tinyScriptedSpec(kLength); }

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

    void adaptersAreRecoveredFromTheMergedModelAndOnlyFromOne()
    {
        auto adapted = LoraDenoiser::adapt(scriptedModel(), {2, LoraOptions{}.targets, 7}).value();
        {
            torch::NoGradGuard noGrad;
            for (auto& p : adapted->parameters())
                p.add_(torch::randn_like(p) * 0.1);
        }
        const auto expected = adapted->forward(m_tokens, m_t).detach();
        const auto merged = adapted->merged();
        // A fresh model of the same weights, other random A: the merged weights give its B A back.
        auto resumed = LoraDenoiser::adapt(scriptedModel(), {2, LoraOptions{}.targets, 9}).value();
        const Status s = resumed->resumeFrom(*merged);
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().c_str());
        QVERIFY(largestGap(resumed->forward(m_tokens, m_t), expected) < 1e-5);
        const auto product = [](const std::shared_ptr<LoraDenoiser>& m) {
            return torch::matmul(m->parameters()[1], m->parameters()[0]).detach();
        };
        QVERIFY(largestGap(product(resumed), product(adapted)) < 1e-5);
        QVERIFY(resumed->parameters()[0].requires_grad());

        // A model whose other weights moved (a run of every weight) and a change of rank 3 for
        // adapters of rank 2 are refused, the adapters left as they were.
        auto everyWeight = scriptedModel();
        auto changedRank = scriptedModel();
        {
            torch::NoGradGuard noGrad;
            everyWeight->parameterSlot("embed_table").add_(0.01);
            changedRank->parameterSlot("proj_weight").add_(torch::randn({3, 8}) * 0.01);
        }
        const auto before = product(resumed);
        const Status other = resumed->resumeFrom(*everyWeight);
        QVERIFY(!other.ok());
        QVERIFY2(other.error().find("its weight 'embed_table', which the adapters leave alone, differs") !=
                     std::string::npos,
                 other.error().c_str());
        const Status rank = resumed->resumeFrom(*changedRank);
        QVERIFY(!rank.ok());
        QVERIFY2(rank.error().find("its change of 'proj_weight' needs a rank above the adapters' 2") != std::string::npos,
                 rank.error().c_str());
        QCOMPARE(largestGap(product(resumed), before), 0.0);
    }

    void aStoppedRunWithAdaptersResumesAndFinishes()
    {
        QTemporaryDir dir;
        const std::string reference = dir.filePath("imported.d2dpo").toStdString();
        CheckpointInfo info{newCheckpointId(), "", "pretrained", spec(), "{}", "{}", 0, utcNow()};
        QVERIFY(saveCheckpoint(reference, scriptedModel(), info).ok());
        DpoJobSpec job;
        job.referencePath = reference;
        job.storePath = dir.filePath("store.sqlite").toStdString();
        job.source = PreferenceSource::RulePairs;
        job.rulePairs = 64;
        job.dpo = test::tinyDpo(6);
        job.dpo.loraRank = 2;
        job.dpo.learningRate = 1e-2;
        job.schedule = test::tinySchedule();
        job.schedule.checkpointEvery = 2;
        job.schedule.logEvery = 1;
        job.schedule.hostReadEvery = 1;
        job.device = "cpu";
        job.outputFolder = dir.filePath("run").toStdString();
        // Stopped at its first checkpoint (step 2) ...
        struct StopAtCheckpoint final : TrainListener {
            StopToken stop;
            void onCheckpoint(const CheckpointEvent&) override { stop.requestStop(); }
        } stopping;
        const DpoJobOutcome first = runDpoJob(job, stopping, stopping.stop);
        QCOMPARE(first.finished.status, RunStatus::Stopped);
        QVERIFY(first.runId > 0);
        // ... then resumed: its adapters come from the merged checkpoint, and it runs to the end.
        auto again = resumeJobSpec(job.storePath, first.runId);
        QVERIFY2(again.ok(), again.ok() ? "" : again.error().c_str());
        QCOMPARE(again->dpo.loraRank, 2);
        test::ListenerRecorder log;
        StopToken never;
        const DpoJobOutcome second = runDpoJob(again.value(), log, never);
        QVERIFY2(second.finished.status == RunStatus::Completed, second.finished.error.c_str());
        QVERIFY2(log.log.find("resuming run " + std::to_string(first.runId) + " at step 2") != std::string::npos,
                 log.log.c_str());
        // Its first step starts where the stopped run was, not from the model: with adapters
        // started afresh (B = 0) the policy would be the reference, every margin 0, the loss ln 2.
        QVERIFY(!log.progress.empty());
        QCOMPARE(log.progress.front().step, int64_t(3));
        QVERIFY2(std::abs(log.progress.front().loss - std::log(2.0)) > 1e-4,
                 qPrintable(QString::number(log.progress.front().loss, 'g', 9)));
        QVERIFY(!log.checkpoints.empty());
        QCOMPARE(log.checkpoints.back().step, int64_t(6));
        // Still a run of the adapters: the weights they leave alone are the model's.
        auto last = loadCheckpoint(log.checkpoints.back().path, torch::kCPU);
        QVERIFY2(last.ok(), last.ok() ? "" : last.error().c_str());
        auto model = scriptedModel();
        const auto trained = last->model->named_parameters();
        QVERIFY(torch::equal(trained["embed_table"], model->named_parameters()["embed_table"]));
        QVERIFY(largestGap(trained["proj_weight"], model->named_parameters()["proj_weight"]) > 1e-4);
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
        QVERIFY2(finished.error.find("low-rank adapters are for models brought in (TorchScript or published weights)") != std::string::npos,
                 finished.error.c_str());
    }
};

QTEST_GUILESS_MAIN(TestLora)
#include "tst_lora.moc"
