// SPDX-License-Identifier: GPL-3.0-or-later
// The training worker adapter (TrainRunner): progress out in order, a stop honoured within one step,
// a throwing trainer or NaN weights reported instead of crashing, and a destroyed runner joins its job.
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <cmath>
#include <cstdlib>

#include "support/testsupport.h"
#include "support/tinycheckpoint.h"

#include "jobs/dpojob.h"
#include "ui/train/trainworker.h"

using namespace d2dpo;
using namespace d2dpo::ui;

namespace {

/// A tiny untrained binary-integers model (N = 10) saved as a checkpoint; empty when not written.
std::string tinyCheckpoint(const QTemporaryDir& dir, const QString& name, bool poisoned = false)
{
    test::TinyCheckpointOptions tiny;
    tiny.length = 10;
    tiny.seed = 5;
    if (poisoned)
        tiny.weights = test::TinyCheckpointOptions::Weights::AllNaN;
    const auto written = test::writeTinyCheckpoint(dir.filePath(name).toStdString(), tiny);
    return written ? written->path : std::string();
}

DpoJobSpec quickJob(const std::string& reference, const QTemporaryDir& dir, int steps)
{
    DpoJobSpec job;
    job.referencePath = reference;
    job.source = PreferenceSource::RulePairs;
    job.rulePairs = 200;
    job.dpo.steps = steps;
    job.dpo.batch = 8;
    job.schedule.evalEvery = 10;
    job.schedule.evalSamples = 40;
    job.sampling.steps = 8;
    job.device = "cpu";
    job.outputFolder = dir.filePath(QStringLiteral("runs/%1").arg(QString::number(qint64(std::rand())))).toStdString();
    return job;
}

TrainJob asTrainJob(DpoJobSpec spec)
{
    return [spec](TrainListener& listener, const StopToken& stop) { return runDpoJob(spec, listener, stop).finished; };
}

} // namespace

class TestTrainRunner final : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::string m_reference;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_reference = tinyCheckpoint(m_dir, QStringLiteral("tiny.d2dpo"));
        QVERIFY(!m_reference.empty());
    }

    void runnerReportsProgressEvaluationsAndTheResult()
    {
        TrainRunner runner;
        QSignalSpy progress(&runner, &TrainRunner::progress);
        QSignalSpy evaluated(&runner, &TrainRunner::evaluated);
        QSignalSpy logged(&runner, &TrainRunner::logLine);
        QSignalSpy finished(&runner, &TrainRunner::finished);
        QVERIFY(runner.start(asTrainJob(quickJob(m_reference, m_dir, 30))));
        QVERIFY(runner.running());
        QVERIFY(!runner.start(asTrainJob(quickJob(m_reference, m_dir, 30)))); // one job at a time
        QVERIFY(finished.wait(60000));
        QVERIFY(!runner.running());
        const auto done = finished.at(0).at(0).value<FinishedEvent>();
        QCOMPARE(done.status, RunStatus::Completed);
        QCOMPARE(done.stepsDone, int64_t(30));
        QVERIFY(QFile::exists(QString::fromStdString(done.lastCheckpointPath)));
        // Every step, in order, delivered before `finished`.
        QCOMPARE(progress.size(), 30);
        for (int i = 0; i < progress.size(); ++i) {
            const auto e = progress.at(i).at(0).value<ProgressEvent>();
            QCOMPARE(e.step, int64_t(i + 1));
            QCOMPARE(e.totalSteps, int64_t(30));
            QVERIFY(std::isfinite(e.loss));
            QVERIFY(e.rewards.has_value());
        }
        // The reference first (the baselines), then steps 10, 20 and the end.
        QCOMPARE(evaluated.size(), 4);
        QVERIFY(evaluated.at(0).at(0).value<EvaluationEvent>().ofReference);
        QCOMPARE(evaluated.at(3).at(0).value<EvaluationEvent>().step, int64_t(30));
        QVERIFY(!logged.isEmpty());
    }

    void stopIsHonouredWithinOneStep()
    {
        TrainRunner runner;
        QSignalSpy finished(&runner, &TrainRunner::finished);
        QSignalSpy progress(&runner, &TrainRunner::progress);
        auto job = quickJob(m_reference, m_dir, 1'000'000);
        job.schedule.evalEvery = 0;
        job.evaluateReference = false;
        QVERIFY(runner.start(asTrainJob(job)));
        QVERIFY(progress.wait(30000));
        runner.requestStop();
        // Read after the request: the step in flight then is at most one more than this.
        const int64_t reported = runner.lastReportedStep();
        QVERIFY(finished.wait(30000));
        const auto done = finished.at(0).at(0).value<FinishedEvent>();
        QCOMPARE(done.status, RunStatus::Stopped);
        QVERIFY2(done.stepsDone <= reported + 1,
                 qPrintable(QStringLiteral("stopped after %1, stop requested at %2").arg(done.stepsDone).arg(reported)));
        QVERIFY(!done.lastCheckpointPath.empty()); // a stopped run keeps its weights
    }

    void aThrowingTrainerIsReportedAndTheRunnerStaysUsable()
    {
        TrainRunner runner;
        QSignalSpy finished(&runner, &TrainRunner::finished);
        QVERIFY(runner.start([](TrainListener& listener, const StopToken&) -> FinishedEvent {
            listener.onProgress({1, 10, 0.69, std::nullopt, 1, 1});
            throw std::runtime_error("device vanished");
        }));
        QVERIFY(finished.wait(10000));
        const auto done = finished.at(0).at(0).value<FinishedEvent>();
        QCOMPARE(done.status, RunStatus::Failed);
        QVERIFY2(QString::fromStdString(done.error).contains(QStringLiteral("device vanished")), done.error.c_str());
        QVERIFY(runner.start([](TrainListener&, const StopToken&) { return FinishedEvent{}; }));
        QVERIFY(finished.wait(10000));
        QCOMPARE(finished.at(1).at(0).value<FinishedEvent>().status, RunStatus::Completed);
    }

    void aCheckpointWithNonFiniteWeightsIsRefused()
    {
        const std::string poisoned = tinyCheckpoint(m_dir, QStringLiteral("nan.d2dpo"), true);
        TrainRunner runner;
        QSignalSpy finished(&runner, &TrainRunner::finished);
        auto job = quickJob(poisoned, m_dir, 20);
        job.evaluateReference = false;
        QVERIFY(runner.start(asTrainJob(job)));
        QVERIFY(finished.wait(30000));
        const auto done = finished.at(0).at(0).value<FinishedEvent>();
        QCOMPARE(done.status, RunStatus::Failed);
        // A valid checksum over NaN weights: refused at load, before any step.
        QVERIFY2(QString::fromStdString(done.error).contains(QStringLiteral("NaN or infinite")), done.error.c_str());
        QCOMPARE(done.stepsDone, int64_t(0));
        QVERIFY(done.lastCheckpointPath.empty()); // non-finite weights are never written
    }

    void destroyingTheRunnerStopsAndJoinsTheJob()
    {
        auto runner = std::make_unique<TrainRunner>();
        QSignalSpy progress(runner.get(), &TrainRunner::progress);
        auto job = quickJob(m_reference, m_dir, 1'000'000);
        job.evaluateReference = false;
        job.schedule.evalEvery = 0;
        QVERIFY(runner->start(asTrainJob(job)));
        QVERIFY(progress.wait(30000));
        QElapsedTimer clock;
        clock.start();
        runner.reset();
        QVERIFY(clock.elapsed() < 20000);
    }
};

QTEST_MAIN(TestTrainRunner)
#include "tst_trainrunner.moc"
