// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/models/modelmeasurer.h"
#include "ui/common/longjobs.h"

#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

#include "base/timeutil.h"
#include "jobs/pretrainjob.h"

namespace d2dpo::ui {

ModelMeasurer::ModelMeasurer(QObject* parent) : QObject(parent), m_watcher(new QFutureWatcher<DrawnSamples>(this))
{
    connect(m_watcher, &QFutureWatcherBase::finished, this, [this] {
        DrawnSamples drawn = m_watcher->result();
        if (drawn.summary && m_running && m_running->batch == 0)
            for (Job& next : m_queue)
                if (next.call == m_running->call && next.batch == 0) {
                    next.drawn = {drawn.summary->metrics.samples, 0};
                    next.batch = drawn.summary->batch;
                }
        // Start the next draw before anyone hears of this one: a listener that asks for more
        // (measure()) then queues behind it instead of starting a second draw beside it.
        m_running.reset();
        startNext();
        Q_EMIT measured(drawn);
    });
}

ModelMeasurer::~ModelMeasurer()
{
    if (m_stop)
        m_stop->requestStop();
    m_watcher->waitForFinished();
}

// The rule of every evaluation someone waits on (base/samplebudget.h), so a view and a dialog agree.
int64_t ModelMeasurer::batchFor(int64_t samples) { return evaluationBatchFor(samples); }

void ModelMeasurer::measure(const std::vector<ModelRecord>& models, const SampleBudget& budget)
{
    const auto same = [&](const Job& j, const QString& id) {
        return j.id == id && j.budget.most == budget.most && j.budget.seconds == budget.seconds;
    };
    for (const ModelRecord& m : models) {
        const QString id = QString::fromStdString(m.id);
        // A draw being stopped (a cancel just now) does not count: it ends without a result.
        const bool known = (m_running && m_stop && !m_stop->stopRequested() && same(*m_running, id)) ||
                           std::any_of(m_queue.begin(), m_queue.end(), [&](const Job& j) { return same(j, id); });
        if (!known)
            m_queue.push_back({id, QString::fromStdString(m.name), m.path, budget, budget, 0, m_calls});
    }
    ++m_calls;
    if (!m_running)
        startNext();
}

void ModelMeasurer::cancel()
{
    m_queue.clear();
    if (m_stop)
        m_stop->requestStop();
}

void ModelMeasurer::startNext()
{
    if (m_queue.empty()) {
        m_stop.reset();
        Q_EMIT idle();
        return;
    }
    m_running = m_queue.front();
    m_queue.pop_front();
    m_stop = std::make_shared<StopToken>();
    m_clock.start();
    const Job job = *m_running;
    Q_EMIT progress(job.name, 0, job.drawn.fitted() ? 0 : job.drawn.most, -1);
    // Emitted from the worker, queued by Qt to the GUI thread; the measurer outlives the draw (its
    // destructor waits). The rate so far gives the time left (the first pass pays for the loading).
    std::shared_ptr<StopToken> stop = m_stop;
    auto report = [this, job, stop, clock = m_clock](double done, int64_t total) {
        if (!stop->stopRequested()) // a cancelled draw says nothing more
            Q_EMIT progress(job.name, qint64(done), total, secondsLeft(clock.elapsed() / 1000.0, done, total));
    };
    m_watcher->setFuture(QtConcurrent::run(longJobPool(), [job, report, stop] {
        // The draws of a model are seeded like every measurement (measurement.h), in smaller
        // batches: the same seed and count give the same figures each time the view draws them.
        MeasurementSpec spec = standardMeasurement();
        spec.sampling.batch = int(job.batch > 0 ? job.batch : batchFor(job.drawn.most));
        auto drawn = sampleCheckpoint(job.path, job.drawn.most, spec.sampling, spec.seed, "auto", "", report,
                                      stop.get(), job.drawn.seconds, job.batch > 0 ? 0.0 : kPassSeconds);
        if (drawn) // the batches split the seeded draws: the same count in other batches draws others
            drawn->metrics.sampler += ", in batches of " + std::to_string(drawn->batch);
        return DrawnSamples{job.id, job.budget, drawn ? std::optional(drawn.value()) : std::nullopt,
                            drawn ? QString() : QString::fromStdString(drawn.error())};
    }));
}

} // namespace d2dpo::ui
