// SPDX-License-Identifier: GPL-3.0-or-later
// What keeps a GPU busy without waiting on the host: all-positions terms equal positions-only terms,
// reading losses back every few steps reports the same run, training and sampling work on the "auto"
// device (CUDA where there is one), and the default thread count is the free physical cores.
#include <QTemporaryDir>

#include <atomic>
#include <thread>

#include "support/listenerrecorder.h"
#include "support/testsupport.h"
#include "support/tinycheckpoint.h"

#include "base/cputhreads.h"
#include "diffusion/eulersampler.h"
#include "diffusion/losses.h"
#include "diffusion/maskingnoise.h"
#include "jobs/dpojob.h"
#include "jobs/desktoprun.h"
#include "model/transformerdenoiser.h"
#include "model/device.h"
#include "tasks/binaryintegerstask.h"
#include "train/dpotrainer.h"
#include "train/pretrainer.h"

#include <ATen/Parallel.h>

using namespace d2dpo;
using Recorder = d2dpo::test::ListenerRecorder;

class TestDevicePath final : public QObject {
    Q_OBJECT

private:
    BinaryIntegersTask m_task{6};
    MaskingNoise m_noise{2, 0.5};
    ModelSpec m_spec = test::tinySpec(6);
    SamplingConfig m_sampling{"euler", 8, 100};

    Denoiser freshModel(torch::Device device = torch::kCPU)
    {
        torch::manual_seed(5);
        return makeDenoiser(m_spec, 2, device);
    }

    /// A D2-DPO run of `steps` on rule pairs, reading losses back every `readEvery` steps, reported
    /// to `recorder`: the trained policy.
    Denoiser run(Recorder& recorder, int steps, int readEvery, int logEvery)
    {
        DpoScheduleConfig schedule = test::tinySchedule();
        schedule.hostReadEvery = readEvery;
        schedule.logEvery = logEvery;
        schedule.evalEvery = 6;
        DpoTrainer trainer(freshModel(), m_task, m_noise,
                           DpoTrainerOptions(m_spec, test::tinyDpo(steps)).schedule(schedule).sampling(m_sampling).seed(3));
        auto generator = makeGenerator(8, torch::kCPU);
        const auto [winners, losers] = m_task.rulePairs(128, generator, torch::kCPU).value();
        trainer.setPreferences(winners, losers);
        StopToken stop;
        trainer.run(recorder, stop);
        return trainer.policy();
    }

private Q_SLOTS:
    void allPositionsTermsEqualPositionsOnlyTermsInValueAndGradient()
    {
        Denoiser policy = freshModel();
        Denoiser reference = frozenCopy(policy);
        {
            // Move the policy away from the reference so that the divergences are not all zero.
            torch::NoGradGuard noGrad;
            for (auto& p : policy->parameters())
                p.add_(torch::randn_like(p) * 0.05);
        }
        auto generator = makeGenerator(11, torch::kCPU);
        const auto [w, l] = m_task.rulePairs(12, generator, torch::kCPU).value();
        const auto x1 = torch::cat({w, l});
        const auto t = torch::rand({12}, generator) * 0.999;
        const auto tBoth = torch::cat({t, t});
        const auto xt = m_noise.corrupt(x1, tBoth, generator);

        const auto termsOf = [](const SequenceDivergences& d) {
            DpoTerms terms = dpoLossFromDivergences(d.divergence.slice(0, 0, 12), d.divergence.slice(0, 12), 0.1);
            terms.loss = terms.loss + 0.5 * d.nll.sum() / d.positionsRead.sum(); // the rpo term's gradient too
            return terms;
        };
        const SequenceDivergences atRows = divergencesAtPositions(policy, reference, m_noise, x1, xt, tBoth);
        const DpoTerms at = termsOf(atRows);
        at.loss.backward();
        std::vector<torch::Tensor> gradAt;
        for (auto& p : policy->parameters()) {
            gradAt.push_back(p.grad().clone());
            p.mutable_grad() = torch::Tensor();
        }
        const SequenceDivergences allRows = divergencesAllPositions(policy, reference, m_noise, x1, xt, tBoth);
        const DpoTerms all = termsOf(allRows);
        QVERIFY(test::maxAbsDiff(atRows.nll, allRows.nll) < 1e-4);
        QVERIFY(test::maxAbsDiff(atRows.positionsRead, allRows.positionsRead) == 0);
        all.loss.backward();

        QVERIFY(test::maxAbsDiff(at.divergenceChosen, all.divergenceChosen) < 1e-4);
        QVERIFY(test::maxAbsDiff(at.divergenceRejected, all.divergenceRejected) < 1e-4);
        QVERIFY(at.divergenceChosen.abs().sum().item<double>() > 1e-3); // not trivially zero
        QVERIFY(std::abs(at.loss.item<double>() - all.loss.item<double>()) < 1e-6);
        size_t i = 0;
        for (auto& p : policy->parameters()) {
            if (!gradAt[i].defined()) {
                ++i;
                continue;
            }
            const double scale = std::max(1.0, gradAt[i].abs().max().item<double>());
            QVERIFY2(test::maxAbsDiff(gradAt[i], p.grad()) / scale < 1e-4, qPrintable(QString::number(i)));
            ++i;
        }
    }

    void readingBackEveryFewStepsReportsTheSameRun()
    {
        Recorder every, batched;
        const Denoiser everyModel = run(every, 20, 1, 1);
        const Denoiser batchedModel = run(batched, 20, 7, 1);
        QCOMPARE(batched.progress.size(), every.progress.size());
        QCOMPARE(every.progress.size(), size_t(20));
        for (size_t i = 0; i < every.progress.size(); ++i) {
            QCOMPARE(batched.progress[i].step, every.progress[i].step);
            QCOMPARE(batched.progress[i].loss, every.progress[i].loss);
            QVERIFY(batched.progress[i].rewards && every.progress[i].rewards);
            QCOMPARE(batched.progress[i].rewards->margins, every.progress[i].rewards->margins);
        }
        QCOMPARE(batched.evaluations.size(), every.evaluations.size()); // steps 6, 12, 18 and the end
        QCOMPARE(batched.evaluations.size(), size_t(4));
        for (size_t i = 0; i < every.evaluations.size(); ++i)
            QCOMPARE(batched.evaluations[i].metrics.valueOr0("odd_ratio"), every.evaluations[i].metrics.valueOr0("odd_ratio"));
        QCOMPARE(batched.finished.front().stepsDone, int64_t(20));
        const auto a = everyModel->parameters();
        const auto b = batchedModel->parameters();
        for (size_t i = 0; i < a.size(); ++i)
            QVERIFY(torch::equal(a[i], b[i]));

        // Reports every 5th step only: the same events as the every-step run at those steps.
        Recorder sparse;
        run(sparse, 20, 7, 5);
        QCOMPARE(sparse.progress.size(), size_t(4));
        for (const ProgressEvent& e : sparse.progress)
            QCOMPARE(e.loss, every.progress[size_t(e.step - 1)].loss);
    }

    void nonFiniteLossAtTheFirstStepSaysNothingCompleted()
    {
        DpoConfig config = test::tinyDpo(5);
        config.beta = std::numeric_limits<double>::infinity(); // inf * 0 margin: NaN at step 1
        DpoTrainer trainer(freshModel(), m_task, m_noise,
                           DpoTrainerOptions(m_spec, config).schedule(test::tinySchedule()).sampling(m_sampling).seed(3));
        auto generator = makeGenerator(8, torch::kCPU);
        const auto [winners, losers] = m_task.rulePairs(32, generator, torch::kCPU).value();
        trainer.setPreferences(winners, losers);
        Recorder recorder;
        StopToken stop;
        const FinishedEvent done = trainer.run(recorder, stop);
        QCOMPARE(done.status, RunStatus::Failed);
        QCOMPARE(done.stepsDone, int64_t(0));
        QVERIFY2(done.error.find("at step 1; no step completed") != std::string::npos, done.error.c_str());
        QVERIFY(done.lastCheckpointPath.empty());
    }

    void trainsAndSamplesOnTheAutoDevice()
    {
        const auto device = resolveDevice("auto");
        QVERIFY(device.ok());
        qInfo("device: %s", describeRuntime(device.value()).c_str());
        Denoiser model = freshModel(device.value());
        PretrainConfig pretrain;
        pretrain.steps = 20;
        pretrain.batch = 32;
        Pretrainer pretrainer(model, m_task, m_noise, pretrain, 1);
        Recorder pretrainEvents;
        StopToken stop;
        QCOMPARE(pretrainer.run(pretrainEvents, stop).status, RunStatus::Completed);

        DpoScheduleConfig schedule = test::tinySchedule();
        schedule.evalEvery = 10;
        DpoTrainer trainer(model, m_task, m_noise,
                           DpoTrainerOptions(m_spec, test::tinyDpo(30)).schedule(schedule).sampling(m_sampling).seed(3));
        auto generator = makeGenerator(8, device.value());
        const auto [winners, losers] = m_task.rulePairs(64, generator, device.value()).value();
        trainer.setPreferences(winners, losers);
        Recorder events;
        const FinishedEvent done = trainer.run(events, stop);
        QVERIFY2(done.status == RunStatus::Completed, done.error.c_str());
        QCOMPARE(done.stepsDone, int64_t(30));
        QCOMPARE(events.progress.size(), size_t(30));
        for (const ProgressEvent& e : events.progress)
            QVERIFY(std::isfinite(e.loss));
        QCOMPARE(events.evaluations.size(), size_t(3));

        EulerSampler sampler(trainer.policy(), m_task.maskToken(), 8, 0.5);
        auto samplingGenerator = makeGenerator(2, device.value());
        const auto samples = sampler.sample(40, samplingGenerator, 16);
        QCOMPARE(samples.device().type(), device->type());
        QCOMPARE(samples.size(0), int64_t(40));
        QVERIFY(samples.lt(2).all().item<bool>()); // never a mask
    }

    void aJobSetsItsThreadsWhereItRuns()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string reference = dir.filePath(QStringLiteral("ref.d2dpo")).toStdString();
        test::TinyCheckpointOptions tiny;
        tiny.spec = m_spec;
        tiny.seed = 5;
        tiny.step = 1;
        QVERIFY(test::writeTinyCheckpoint(reference, tiny).ok());
        auto runWith = [&](int threads, int reserved) {
            DpoJobSpec job;
            job.referencePath = reference;
            job.source = PreferenceSource::RulePairs;
            job.rulePairs = 64;
            job.dpo = test::tinyDpo(2);
            job.schedule = test::tinySchedule();
            job.sampling = m_sampling;
            job.device = "cpu";
            job.threads = threads;
            job.reservedCores = reserved;
            job.evaluateReference = false;
            job.outputFolder = dir.filePath(QStringLiteral("run%1-%2").arg(threads).arg(reserved)).toStdString();
            Recorder log;
            StopToken stop;
            const DpoJobOutcome outcome = runDpoJob(job, log, stop);
            if (outcome.finished.status != RunStatus::Completed)
                qWarning("%s", outcome.finished.error.c_str());
            return log.log;
        };
        const int before = at::get_num_threads();
        const std::string kept = runWith(0, 1000); // every core reserved: still one thread
        QVERIFY2(kept.find(" 1 intra-op thread(s)") != std::string::npos, kept.c_str());
        const std::string three = runWith(3, 1000); // an explicit count wins over the reserve
        QVERIFY2(three.find(" 3 intra-op thread(s)") != std::string::npos, three.c_str());
        QVERIFY(configureThreads(before).ok());

        DpoJobSpec desktop;
        leaveACoreForTheGui(desktop);
        QCOMPARE(desktop.reservedCores, 1);
        QCOMPARE(desktop.threads, 0);
    }

    void defaultThreadsAreTheFreePhysicalCores()
    {
        const int cores = physicalCoreCount();
        QVERIFY(cores >= 1);
        QVERIFY(unsigned(cores) <= std::max(1u, std::thread::hardware_concurrency()));
        const int free = defaultThreadCount();
        QVERIFY(free >= 1 && free <= cores);
        QVERIFY(defaultThreadCount(1) <= std::max(1, cores - 1)); // a core kept for the GUI thread
        {
            // A thread spinning while the machine is sampled is a busy core (of this process,
            // but the sample counts every process alike).
            std::atomic<bool> spin{true};
            std::thread spinner([&] {
                while (spin.load(std::memory_order_relaxed)) {
                }
            });
            const int busy = busyCoreCount();
            spin = false;
            spinner.join();
            QVERIFY2(busy >= 1, qPrintable(QString::number(busy)));
        }
        QCOMPARE(defaultThreadCount(1000), 1); // never fewer than one
        const int before = at::get_num_threads();
        QVERIFY(configureThreads(0).ok());
        QVERIFY(at::get_num_threads() >= 1 && at::get_num_threads() <= cores);
        QVERIFY(configureThreads(1).ok());
        QCOMPARE(at::get_num_threads(), 1);
        QVERIFY(configureThreads(3).ok());
        QCOMPARE(at::get_num_threads(), 3);
        QVERIFY(!configureThreads(-1).ok());
        QVERIFY(configureThreads(before).ok());
    }
};

QTEST_GUILESS_MAIN(TestDevicePath)
#include "tst_devicepath.moc"
