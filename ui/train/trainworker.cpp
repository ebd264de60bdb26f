// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/train/trainworker.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QThread>

#include <exception>

#include "base/failurereport.h"

namespace d2dpo::ui {

/// Turns the core listener's calls (made in the worker thread) into the worker's signals.
class SignalListener final : public TrainListener {
public:
    explicit SignalListener(TrainWorker& worker)
        : m_worker(worker)
    {
    }
    void onProgress(const ProgressEvent& e) override
    {
        m_worker.m_lastStep.store(e.step);
        Q_EMIT m_worker.progress(e);
    }
    void onEvaluation(const EvaluationEvent& e) override { Q_EMIT m_worker.evaluated(e); }
    void onEvaluationProgress(double drawn, int64_t total) override
    {
        Q_EMIT m_worker.evaluationProgress(drawn, qint64(total));
    }
    void onCheckpoint(const CheckpointEvent& e) override { Q_EMIT m_worker.checkpointWritten(e); }
    void onLog(const std::string& line) override { Q_EMIT m_worker.logLine(QString::fromStdString(line)); }
    void onFinished(const FinishedEvent&) override {} // the job's return value is reported instead

private:
    TrainWorker& m_worker;
};

TrainWorker::TrainWorker(TrainJob job)
    : m_job(std::move(job))
{
}

void TrainWorker::run()
{
    FinishedEvent done;
    SignalListener listener(*this);
    try {
        done = m_job(listener, m_stop);
    } catch (const std::exception& e) {
        done.status = RunStatus::Failed;
        done.error = "training stopped by an error: " + userMessage(e);
    } catch (...) {
        done.status = RunStatus::Failed;
        done.error = "training stopped by an unknown error";
    }
    Q_EMIT finished(done);
}

void TrainRunner::ThreadStopper::operator()(QThread* thread) const
{
    thread->quit();
    thread->wait();
    delete thread;
}

TrainRunner::TrainRunner(QObject* parent)
    : QObject(parent)
{
    static const bool registered = [] {
        qRegisterMetaType<d2dpo::ProgressEvent>();
        qRegisterMetaType<d2dpo::EvaluationEvent>();
        qRegisterMetaType<d2dpo::CheckpointEvent>();
        qRegisterMetaType<d2dpo::FinishedEvent>();
        qRegisterMetaType<d2dpo::RunStatus>();
        return true;
    }();
    (void)registered;
}

TrainRunner::~TrainRunner()
{
    requestStop();
    m_thread.reset(); // quits and waits: the job returns at its next step
}

bool TrainRunner::start(TrainJob job)
{
    if (m_thread)
        return false;
    m_thread.reset(new QThread);
    m_thread->setObjectName(QStringLiteral("d2dpo-training"));
    m_worker = new TrainWorker(std::move(job));
    m_worker->moveToThread(m_thread.get());
    connect(m_thread.get(), &QThread::started, m_worker, &TrainWorker::run);
    connect(m_thread.get(), &QThread::finished, m_worker, &QObject::deleteLater);
    // Worker -> runner crosses threads: queued, each event copied.
    connect(m_worker, &TrainWorker::progress, this, &TrainRunner::progress);
    connect(m_worker, &TrainWorker::evaluated, this, &TrainRunner::evaluated);
    connect(m_worker, &TrainWorker::evaluationProgress, this, &TrainRunner::evaluationProgress);
    connect(m_worker, &TrainWorker::checkpointWritten, this, &TrainRunner::checkpointWritten);
    connect(m_worker, &TrainWorker::logLine, this, &TrainRunner::logLine);
    connect(m_worker, &TrainWorker::finished, this, [this](const FinishedEvent& event) {
        // Every earlier signal of this job was queued before this one, so it has been delivered.
        m_worker = nullptr;
        m_thread.reset();
        Q_EMIT finished(event);
    });
    m_thread->start();
    return true;
}

void TrainRunner::requestStop()
{
    if (m_worker)
        m_worker->requestStop();
}

int64_t TrainRunner::lastReportedStep() const { return m_worker ? m_worker->lastReportedStep() : 0; }

bool TrainRunner::wait(int timeoutMs)
{
    if (!m_thread)
        return true;
    QThread* thread = m_thread.get();
    QDeadlineTimer deadline(timeoutMs);
    while (m_thread && !deadline.hasExpired()) {
        thread->wait(20);
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    }
    return !m_thread;
}

} // namespace d2dpo::ui
