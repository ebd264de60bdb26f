// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/modelmeasurer.h"
#include "ui/longjobs.h"

#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

#include "base/timeutil.h"
#include "jobs/pretrainjob.h"

namespace d2dpo::ui {

ModelMeasurer::ModelMeasurer(QObject* parent) : QObject(parent), m_watcher(new QFutureWatcher<DrawnSamples>(this))
{
    connect(m_watcher, &QFutureWatcherBase::finished, this, [this] {
        DrawnSamples drawn = m_watcher->result();
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

// The rule of every evaluation someone waits on (jobs/pretrainjob.h), so a view and a dialog agree.
int64_t ModelMeasurer::batchFor(int64_t samples) { return evaluationBatchFor(samples); }

void ModelMeasurer::measure(const std::vector<ModelRecord>& models, int64_t samples)
{
    for (const ModelRecord& m : models) {
        const QString id = QString::fromStdString(m.id);
        const bool known = (m_running && m_running->id == id && m_running->samples == samples) ||
                           std::any_of(m_queue.begin(), m_queue.end(),
                                       [&](const Job& j) { return j.id == id && j.samples == samples; });
        if (!known)
            m_queue.push_back({id, QString::fromStdString(m.name), m.path, samples});
    }
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
    Q_EMIT progress(job.name, 0, job.samples, -1);
    // Emitted from the worker, queued by Qt to the GUI thread; the measurer outlives the draw (its
    // destructor waits). The rate so far gives the time left (the first batch pays for the loading).
    auto report = [this, job, clock = m_clock](int64_t done, int64_t total) {
        Q_EMIT progress(job.name, done, total, secondsLeft(clock.elapsed() / 1000.0, done, total));
    };
    std::shared_ptr<StopToken> stop = m_stop;
    m_watcher->setFuture(QtConcurrent::run(longJobPool(), [job, report, stop] {
        // The draws of a model are seeded like every measurement (measurement.h), in smaller
        // batches: the same seed and count give the same figures each time the view draws them.
        MeasurementSpec spec = standardMeasurement();
        spec.samples = job.samples;
        spec.sampling.batch = batchFor(job.samples);
        auto drawn = sampleCheckpoint(job.path, spec.samples, spec.sampling, spec.seed, "auto", "", report, stop.get());
        if (drawn) // the batches split the seeded draws: the same count in other batches draws others
            drawn->metrics.sampler += ", in batches of " + std::to_string(spec.sampling.batch);
        return DrawnSamples{job.id, drawn ? std::optional(drawn.value()) : std::nullopt,
                            drawn ? QString() : QString::fromStdString(drawn.error())};
    }));
}

} // namespace d2dpo::ui
