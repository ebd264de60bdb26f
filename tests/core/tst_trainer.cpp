// SPDX-License-Identifier: GPL-3.0-or-later
// The trainers: they learn, report through the listener, stop promptly on request (from the
// listener or another thread), and end a run with a clear error on a non-finite loss while
// keeping the last good checkpoint.
#include <QTemporaryDir>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "support/listenerrecorder.h"
#include "support/testsupport.h"

#include "tasks/binaryintegerstask.h"
#include "io/checkpoint.h"
#include "model/transformerdenoiser.h"
#include "model/device.h"
#include "train/dpotrainer.h"
#include "train/evaluation.h"
#include "diffusion/sampler.h"
#include "diffusion/maskingnoise.h"
#include "train/pretrainer.h"

using namespace d2dpo;
using Recorder = d2dpo::test::ListenerRecorder;

namespace {

/// A model that asks for a stop on its `stopAt`-th pass (a user's Cancel in the middle of a batch).
class StopsOnPass final : public DenoiserModel {
public:
    /// Raises `stop` on pass `stopAt` (0: never); each pass takes at least `passMs` (a large model's pass).
    StopsOnPass(Denoiser inner, StopToken& stop, int stopAt, int passMs = 0)
        : DenoiserModel(inner->length(), inner->vocabSize())
        , m_inner(std::move(inner))
        , m_stop(stop)
        , m_stopAt(stopAt)
        , m_passMs(passMs)
    {
    }
    torch::Tensor forward(const torch::Tensor& tokens, const torch::Tensor& t) override
    {
        if (m_passMs > 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(m_passMs));
        if (++passes == m_stopAt)
            m_stop.requestStop();
        return m_inner->forward(tokens, t);
    }
    std::string kind() const override { return m_inner->kind(); }
    std::vector<torch::Tensor> parameters() const override { return m_inner->parameters(); }
    torch::OrderedDict<std::string, torch::Tensor> named_parameters() const override { return m_inner->named_parameters(); }
    torch::OrderedDict<std::string, torch::Tensor> named_buffers() const override { return m_inner->named_buffers(); }
    void train(bool on) override { m_inner->train(on); }
    void to(torch::Device device) override { m_inner->to(device); }
    void to(torch::ScalarType dtype) override { m_inner->to(dtype); }
    std::shared_ptr<DenoiserModel> deepCopy() const override { return m_inner->deepCopy(); }
    int passes = 0;

private:
    Denoiser m_inner;
    StopToken& m_stop;
    int m_stopAt;
    int m_passMs;
};

} // namespace

class TestTrainer final : public QObject {
    Q_OBJECT

private:
    BinaryIntegersTask m_task{6};
    MaskingNoise m_noise{2, 0.0};
    ModelSpec m_spec = test::tinySpec(6);
    SamplingConfig m_sampling{"euler", 8, 100};

    Denoiser freshModel()
    {
        torch::manual_seed(5);
        return makeDenoiser(m_spec, 2, torch::kCPU);
    }

    DpoTrainer dpoTrainer(int steps, const std::string& checkpointFolder = "", const std::string& parentId = "")
    {
        DpoTrainer trainer(freshModel(), m_task, m_noise,
                           DpoTrainerOptions(m_spec, test::tinyDpo(steps))
                               .schedule(test::tinySchedule())
                               .sampling(m_sampling)
                               .seed(3)
                               .checkpointFolder(checkpointFolder)
                               .parentId(parentId));
        auto generator = makeGenerator(8, torch::kCPU);
        const auto [winners, losers] = m_task.rulePairs(256, generator, torch::kCPU).value();
        trainer.setPreferences(winners, losers);
        return trainer;
    }

private Q_SLOTS:
    void pretrainingLowersTheLoss()
    {
        PretrainConfig config;
        config.steps = 150;
        config.batch = 64;
        config.logEvery = 1;
        Pretrainer trainer(freshModel(), m_task, m_noise, config, 1);
        Recorder recorder;
        StopToken stop;
        const FinishedEvent done = trainer.run(recorder, stop);
        QCOMPARE(done.status, RunStatus::Completed);
        QCOMPARE(done.stepsDone, int64_t(150));
        QCOMPARE(recorder.progress.size(), size_t(150));
        QCOMPARE(recorder.finished.size(), size_t(1));
        double early = 0, late = 0;
        for (int i = 0; i < 20; ++i) {
            early += recorder.progress[size_t(i)].loss;
            late += recorder.progress[recorder.progress.size() - 1 - size_t(i)].loss;
        }
        QVERIFY2(late < 0.8 * early, qPrintable(QString("%1 -> %2").arg(early / 20).arg(late / 20)));
    }

    void dpoReportsRewardsAndEvaluations()
    {
        QTemporaryDir dir;
        DpoTrainer trainer = dpoTrainer(30, dir.path().toStdString(), "parent-id");
        Recorder recorder;
        StopToken stop;
        const FinishedEvent done = trainer.run(recorder, stop);
        QCOMPARE(done.status, RunStatus::Completed);
        QCOMPARE(recorder.progress.size(), size_t(30));
        for (const auto& p : recorder.progress) {
            QVERIFY(p.rewards.has_value());
            QVERIFY(p.rewards->accuracies >= 0 && p.rewards->accuracies <= 1);
            QVERIFY(std::abs(p.rewards->margins - (p.rewards->chosen - p.rewards->rejected)) < 1e-5);
        }
        // Step 1 starts from policy == reference: loss log 2, margins 0.
        QVERIFY(std::abs(recorder.progress.front().loss - std::log(2.0)) < 1e-5);
        QCOMPARE(recorder.evaluations.size(), size_t(1)); // at the end
        QCOMPARE(recorder.checkpoints.size(), size_t(1));
        const auto loaded = loadCheckpoint(done.lastCheckpointPath, torch::kCPU);
        QVERIFY(loaded.ok());
        QCOMPARE(loaded->info.parentId, std::string("parent-id"));
        QCOMPARE(loaded->info.step, int64_t(30));
        // The reference stayed frozen while the policy moved.
        QVERIFY(!torch::equal(trainer.policy()->parameters().front(), trainer.reference()->parameters().front()));
    }

    void aBatchInPiecesTrainsTheSameWeights()
    {
        // 64 pairs a step, at once and in pieces of 8. The pieces' gradient is the same sum of 64
        // pairs' terms in another order, so from the same weights every element agrees to float32's
        // rounding of that sum: 64 terms * 2^-24 = 4e-6 of the gradient's scale (1e-5 here).
        // Adam then divides each element by its own size: one at rounding level (a weight the batch
        // barely touches) moves a kernel-dependent fraction of the learning rate, so weights are
        // compared only where the math fixes the step: where the gradient is 1000 times that
        // rounding, the first step lr g / (|g| + eps) agrees to 1e-3 of the learning rate.
        struct Trained {
            std::vector<double> losses;
            std::vector<torch::Tensor> start, afterFirst, firstGradients;
        };
        auto train = [&](int piece) {
            DpoConfig dpo = test::tinyDpo(5);
            dpo.batch = 64;
            dpo.batchPiece = piece;
            DpoTrainer trainer(freshModel(), m_task, m_noise,
                               DpoTrainerOptions(m_spec, dpo).schedule(test::tinySchedule()).sampling(m_sampling).seed(3));
            auto generator = makeGenerator(8, torch::kCPU);
            const auto [winners, losers] = m_task.rulePairs(256, generator, torch::kCPU).value();
            trainer.setPreferences(winners, losers);
            Trained out;
            for (const auto& p : trainer.policy()->parameters())
                out.start.push_back(p.detach().clone());
            for (int i = 0; i < 5; ++i) {
                out.losses.push_back(trainer.trainStep(false).loss);
                if (i == 0)
                    for (const auto& p : trainer.policy()->parameters()) {
                        out.afterFirst.push_back(p.detach().clone());
                        out.firstGradients.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
                    }
            }
            return out;
        };
        const Trained whole = train(0), pieces = train(8);
        double scale = 0, gradientGap = 0, moved = 0;
        for (const auto& g : whole.firstGradients)
            scale = std::max(scale, g.abs().max().item<double>());
        QVERIFY2(scale > 0, "the first step must have a gradient");
        const double lr = test::tinyDpo(1).learningRate;
        double stepGap = 0;
        int64_t compared = 0;
        for (size_t i = 0; i < whole.firstGradients.size(); ++i) {
            const auto& g = whole.firstGradients[i];
            gradientGap = std::max(gradientGap, (pieces.firstGradients[i] - g).abs().max().item<double>());
            moved = std::max(moved, (whole.afterFirst[i] - whole.start[i]).abs().max().item<double>());
            const auto clear = g.abs() > 1e3 * 1e-5 * scale;
            compared += clear.sum().item<int64_t>();
            stepGap = std::max(stepGap, ((pieces.afterFirst[i] - whole.afterFirst[i]).abs() * clear).max().item<double>());
        }
        QVERIFY2(gradientGap <= 1e-5 * scale,
                 qPrintable(QString("gradients differ by %1 at a scale of %2").arg(gradientGap).arg(scale)));
        QVERIFY2(compared > 100, qPrintable(QString("only %1 weights have a clear gradient").arg(compared)));
        QVERIFY2(moved > 0.5 * lr, "the first step must move the weights by about the learning rate");
        QVERIFY2(stepGap < 1e-3 * lr, qPrintable(QString("clear weights' first steps differ by %1").arg(stepGap)));
        for (int i = 0; i < 5; ++i)
            QVERIFY2(std::abs(pieces.losses[i] - whole.losses[i]) < 1e-5,
                     qPrintable(QString("step %1: %2 vs %3").arg(i + 1).arg(pieces.losses[i]).arg(whole.losses[i])));
    }

    void theDpoTrainerStopsPromptlyWhenTheListenerAsks()
    {
        DpoTrainer trainer = dpoTrainer(1000);
        Recorder recorder;
        StopToken stop;
        recorder.stop = &stop;
        recorder.stopAt = 3;
        const FinishedEvent done = trainer.run(recorder, stop);
        QCOMPARE(done.status, RunStatus::Stopped);
        QCOMPARE(done.stepsDone, int64_t(3));
        QCOMPARE(recorder.progress.size(), size_t(3));
    }

    // A stop heard while the reference is measured (keepBest needs its VSR) ends the run stopped,
    // not failed.
    void aStopWhileTheReferenceIsMeasuredEndsTheRunStopped()
    {
        QTemporaryDir folder;
        DpoScheduleConfig schedule = test::tinySchedule();
        schedule.keepBest = "rule";
        DpoTrainer trainer(freshModel(), m_task, m_noise,
                           DpoTrainerOptions(m_spec, test::tinyDpo(10))
                               .schedule(schedule)
                               .sampling(m_sampling)
                               .seed(3)
                               .checkpointFolder(folder.path().toStdString()));
        auto generator = makeGenerator(8, torch::kCPU);
        const auto [winners, losers] = m_task.rulePairs(64, generator, torch::kCPU).value();
        trainer.setPreferences(winners, losers);
        Recorder recorder;
        StopToken stop;
        stop.requestStop();
        const FinishedEvent done = trainer.run(recorder, stop);
        QCOMPARE(done.status, RunStatus::Stopped);
        QCOMPARE(done.stepsDone, int64_t(0));
        QVERIFY2(done.error.empty(), done.error.c_str());
    }

    void theDpoTrainerStopsPromptlyOnARequestFromAnotherThread()
    {
        DpoTrainer trainer = dpoTrainer(100000);
        Recorder recorder;
        StopToken stop;
        FinishedEvent done;
        std::thread worker([&] { done = trainer.run(recorder, stop); });
        QTRY_VERIFY_WITH_TIMEOUT(recorder.lastStep.load() >= 5, 30000);
        const int64_t requestedAt = recorder.lastStep.load();
        stop.requestStop();
        worker.join();
        QCOMPARE(done.status, RunStatus::Stopped);
        // At most the step in flight when the request came finishes.
        QVERIFY2(done.stepsDone <= requestedAt + 1,
                 qPrintable(QString("stopped at %1, asked at %2").arg(done.stepsDone).arg(requestedAt)));
    }

    void anEvaluationHearsAStopBetweenPassesNotOnlyBetweenBatches()
    {
        // One batch of 500 samples is 6 passes of the exact sampler: a stop asked during the
        // third pass ends the draw before the fourth.
        StopToken stop;
        auto watched = std::make_shared<StopsOnPass>(freshModel(), stop, 3);
        Denoiser model = watched;
        model->eval();
        auto generator = makeGenerator(1, torch::kCPU);
        SamplingConfig exact{"exact", 8, 500};
        QVERIFY_THROWS_EXCEPTION(EvaluationStopped, evaluateModel(model, m_task, m_spec.noise, exact, 500, generator, &stop));
        QCOMPARE(watched->passes, 3);
    }

    void anEvaluationReportsItsPassesAndAFittedCountFitsItsTime()
    {
        // Passes of at least 60 ms, 6 a batch (the exact sampler at length 6): the progress, heard
        // at most every 0.2 s, moves within a batch, so a slow model's bar moves before its first
        // batch ends.
        StopToken stop;
        auto slow = std::make_shared<StopsOnPass>(freshModel(), stop, 0, 60);
        Denoiser model = slow;
        model->eval();
        auto generator = makeGenerator(1, torch::kCPU);
        SamplingConfig exact{"exact", 8, 10};
        std::vector<double> heard;
        evaluateModel(model, m_task, m_spec.noise, exact, 20, generator, &stop,
                      [&](double done, int64_t total) {
                          QCOMPARE(total, int64_t(20));
                          heard.push_back(done);
                      });
        QVERIFY(std::is_sorted(heard.begin(), heard.end()));
        QCOMPARE(heard.back(), 20.0);
        QVERIFY2(std::any_of(heard.begin(), heard.end(), [](double d) { return d > 0 && d < 10; }),
                 "no progress was heard within the first batch");

        // Timed: at least 60 ms for 16 rows, 6 passes a sample, so at most 44 fit in a second: the
        // fewest a fitted count draws, whatever the machine's load.
        const auto sampler = makeSampler(model, m_spec.noise, m_task.vocabSize(), exact);
        const FittedCount fitted = fitSampleCount(*model, *sampler, {2000, 1.0});
        QCOMPARE(fitted.samples, kFewestFittedSamples);
        QVERIFY2(fitted.secondsPerSample >= 0.06 / 16 * 6, fitted.describe().c_str());
        QVERIFY(QString::fromStdString(fitted.describe()).startsWith(QStringLiteral("20 samples (about ")));
        const FittedCount fixed = fitSampleCount(*model, *sampler, {300, 0});
        QCOMPARE(fixed.samples, int64_t(300));
        QCOMPARE(fixed.describe(), std::string("300 samples"));
    }

    void aStopIsHeardInsideAStepBetweenItsPieces()
    {
        // Batches of 16 in pieces of 4. A stop asked during the second step's second piece ends the
        // run there: that step is abandoned before its update, the weights are the first step's.
        DpoConfig dpo = test::tinyDpo(50);
        dpo.batchPiece = 4;
        auto trainerOn = [&](Denoiser model) {
            DpoTrainer trainer(std::move(model), m_task, m_noise,
                               DpoTrainerOptions(m_spec, dpo).schedule(test::tinySchedule()).sampling(m_sampling).seed(3));
            auto generator = makeGenerator(8, torch::kCPU);
            const auto [winners, losers] = m_task.rulePairs(256, generator, torch::kCPU).value();
            trainer.setPreferences(winners, losers);
            return trainer;
        };
        StopToken never;
        auto counted = std::make_shared<StopsOnPass>(freshModel(), never, 0);
        DpoTrainer once = trainerOn(counted);
        once.trainStep(false);
        const int perStep = counted->passes; // the policy's passes in one step: one or more a piece
        QVERIFY(perStep >= 4);

        StopToken stop;
        auto watched = std::make_shared<StopsOnPass>(freshModel(), stop, perStep + 2);
        DpoTrainer trainer = trainerOn(watched);
        Recorder recorder;
        const FinishedEvent done = trainer.run(recorder, stop);
        QCOMPARE(done.status, RunStatus::Stopped);
        QCOMPARE(done.stepsDone, int64_t(1));
        QCOMPARE(watched->passes, perStep + 2); // heard before the piece's backward, not after the step
        const auto stopped = trainer.policy()->parameters(), oneStep = once.policy()->parameters();
        for (size_t i = 0; i < stopped.size(); ++i)
            QVERIFY((stopped[i] - oneStep[i]).abs().max().item<double>() < 1e-6);
    }

    void thePretrainerStopsWhenTheListenerAsks()
    {
        PretrainConfig config;
        config.steps = 100000;
        config.logEvery = 1;
        Pretrainer trainer(freshModel(), m_task, m_noise, config, 1);
        Recorder recorder;
        StopToken stop;
        recorder.stop = &stop;
        recorder.stopAt = 2;
        const FinishedEvent done = trainer.run(recorder, stop);
        QCOMPARE(done.status, RunStatus::Stopped);
        QCOMPARE(done.stepsDone, int64_t(2));
    }

    void nonFiniteLossEndsTheRunAndKeepsTheLastGoodCheckpoint()
    {
        QTemporaryDir dir;
        DpoScheduleConfig schedule = test::tinySchedule();
        schedule.checkpointEvery = 2;
        DpoTrainer trainer(freshModel(), m_task, m_noise,
                           DpoTrainerOptions(m_spec, test::tinyDpo(50))
                               .schedule(schedule)
                               .sampling(m_sampling)
                               .seed(3)
                               .checkpointFolder(dir.path().toStdString())
                               .parentId("p"));
        auto generator = makeGenerator(8, torch::kCPU);
        const auto [winners, losers] = m_task.rulePairs(64, generator, torch::kCPU).value();
        trainer.setPreferences(winners, losers);
        Recorder recorder;
        // After step 5, the weights go bad (as after a diverging update).
        recorder.actAt = 5;
        recorder.action = [&] {
            torch::NoGradGuard noGrad;
            trainer.policy()->parameters().front().fill_(std::numeric_limits<float>::quiet_NaN());
        };
        StopToken stop;
        const FinishedEvent done = trainer.run(recorder, stop);
        QCOMPARE(done.status, RunStatus::Failed);
        QCOMPARE(done.stepsDone, int64_t(5));
        QVERIFY2(done.error.find("non-finite") != std::string::npos, done.error.c_str());
        // The step-4 checkpoint is the last good one; nothing with NaN weights was written.
        QVERIFY2(done.lastCheckpointPath.find("step-000004") != std::string::npos, done.lastCheckpointPath.c_str());
        const auto loaded = loadCheckpoint(done.lastCheckpointPath, torch::kCPU);
        QVERIFY(loaded.ok());
        QVERIFY(allFinite(loaded->model));
        QCOMPARE(recorder.finished.size(), size_t(1));
        QCOMPARE(recorder.finished.front().status, RunStatus::Failed);
    }

    /// Adam's state is a file beside a checkpoint: one written for other parameters (here one value
    /// each, for as many parameters) must fail the run, never reach the fused kernel, which writes
    /// a parameter's count of values through the moments.
    void anAdamStateOfOtherShapesFailsTheRun()
    {
        QTemporaryDir dir;
        const std::string adamPath = dir.filePath("other.adam").toStdString();
        {
            std::vector<torch::Tensor> small;
            for (size_t i = 0; i < freshModel()->parameters().size(); ++i)
                small.push_back(torch::zeros({1}, torch::requires_grad()));
            torch::optim::Adam other(small, torch::optim::AdamOptions(1e-3));
            for (auto& p : small)
                p.mutable_grad() = torch::ones({1});
            other.step();
            torch::serialize::OutputArchive archive;
            other.save(archive);
            archive.save_to(adamPath);
        }
        DpoTrainer trainer(freshModel(), m_task, m_noise,
                           DpoTrainerOptions(m_spec, test::tinyDpo(5))
                               .schedule(test::tinySchedule())
                               .sampling(m_sampling)
                               .seed(3)
                               .resume(DpoResumePoint{0, "", adamPath}));
        auto generator = makeGenerator(8, torch::kCPU);
        const auto [winners, losers] = m_task.rulePairs(64, generator, torch::kCPU).value();
        trainer.setPreferences(winners, losers);
        Recorder recorder;
        StopToken stop;
        const FinishedEvent done = trainer.run(recorder, stop);
        QCOMPARE(done.status, RunStatus::Failed);
        QVERIFY2(done.error.find("does not fit this model (parameter 0 is [") != std::string::npos, done.error.c_str());
        QVERIFY2(done.error.find("but its moment is [1] Float") != std::string::npos, done.error.c_str());
    }

    void aRunWithoutPreferencePairsFailsWithAMessage()
    {
        DpoTrainer trainer(freshModel(), m_task, m_noise, DpoTrainerOptions(m_spec, test::tinyDpo(5)).schedule(test::tinySchedule()).sampling(m_sampling).seed(3));
        Recorder recorder;
        StopToken stop;
        const FinishedEvent done = trainer.run(recorder, stop);
        QCOMPARE(done.status, RunStatus::Failed);
        QVERIFY2(done.error.find("no preference pairs") != std::string::npos, done.error.c_str());
    }
};

QTEST_GUILESS_MAIN(TestTrainer)
#include "tst_trainer.moc"
