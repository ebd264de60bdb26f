// SPDX-License-Identifier: GPL-3.0-or-later
// The bridge between a core training job and the GUI: the job runs in its own QThread; the
// listener's callbacks come out as queued Qt signals (plain structs, copied), and a stop request
// is a direct, thread-safe call because the worker's event loop is busy while it trains. An
// exception escaping the job is caught and reported as a failed run; nothing crosses the thread
// boundary but signals.
#pragma once

#include <QObject>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>

#include "ui/train/traintypes.h"

class QThread;

namespace d2dpo::ui {

/// A job reports through the listener, polls the stop token, and returns how it ended.
/// (The job's own onFinished call is not forwarded: the returned event is, exactly once.)
using TrainJob = std::function<FinishedEvent(TrainListener& listener, const StopToken& stop)>;

/// Lives in the worker thread for one job.
class TrainWorker final : public QObject {
    Q_OBJECT

public:
    explicit TrainWorker(TrainJob job);
    void requestStop() { m_stop.requestStop(); }
    int64_t lastReportedStep() const { return m_lastStep.load(); }

public Q_SLOTS:
    void run();

Q_SIGNALS:
    void progress(const d2dpo::ProgressEvent& event);
    void evaluated(const d2dpo::EvaluationEvent& event);
    /// An evaluation's samples drawn of `total` (TrainListener::onEvaluationProgress).
    void evaluationProgress(double drawn, qint64 total);
    void checkpointWritten(const d2dpo::CheckpointEvent& event);
    void logLine(const QString& line);
    void finished(const d2dpo::FinishedEvent& event);

private:
    friend class SignalListener;
    TrainJob m_job;
    StopToken m_stop;
    std::atomic<int64_t> m_lastStep{0};
};

/// Owned by the GUI: starts one job at a time in a fresh thread and re-emits its signals in the
/// GUI thread. Destroying it stops the job and waits for the thread.
class TrainRunner final : public QObject {
    Q_OBJECT

public:
    explicit TrainRunner(QObject* parent = nullptr);
    ~TrainRunner() override;

    /// False (and nothing started) while a job is still running.
    bool start(TrainJob job);
    /// Thread-safe; the job stops before its next step.
    void requestStop();
    bool running() const { return m_thread != nullptr; }
    /// The last step the worker reported (read from any thread).
    int64_t lastReportedStep() const;
    /// Blocks until the job ends (tests, shutdown); false after `timeoutMs`.
    bool wait(int timeoutMs);

Q_SIGNALS:
    void progress(const d2dpo::ProgressEvent& event);
    void evaluated(const d2dpo::EvaluationEvent& event);
    /// An evaluation's samples drawn of `total` (TrainListener::onEvaluationProgress).
    void evaluationProgress(double drawn, qint64 total);
    void checkpointWritten(const d2dpo::CheckpointEvent& event);
    void logLine(const QString& line);
    void finished(const d2dpo::FinishedEvent& event);

private:
    struct ThreadStopper {
        void operator()(QThread* thread) const;
    };
    std::unique_ptr<QThread, ThreadStopper> m_thread;
    TrainWorker* m_worker = nullptr;
};

} // namespace d2dpo::ui
