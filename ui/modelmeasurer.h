// SPDX-License-Identifier: GPL-3.0-or-later
// The Models view's measurements, drawn in the background one model at a time: each model's
// samples (as many as the view asks for, in batches small enough to report progress and stop
// within seconds at protein length) and their figures. Progress with an estimate of the time
// left, a result as each model is done, and a cancel that ends the draws at the next batch.
#pragma once

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <deque>
#include <memory>
#include <optional>

#include "facades/modelfiles.h"
#include "store/preferencestore.h"

namespace d2dpo::ui {

/// One model's samples, drawn in the background.
struct DrawnSamples {
    QString modelId;
    std::optional<ModelSummary> summary;
    QString error;
};

class ModelMeasurer final : public QObject {
    Q_OBJECT

public:
    explicit ModelMeasurer(QObject* parent = nullptr);
    ~ModelMeasurer() override; ///< stops and waits for the draw in flight

    /// Queues these models (those queued or in flight already are not queued twice).
    void measure(const std::vector<ModelRecord>& models, int64_t samples);
    /// Stops the draw in flight at its next batch and forgets the queue.
    void cancel();
    bool busy() const { return m_running.has_value() || !m_queue.empty(); }
    /// The batch each measurement draws at once: progress and a stop come between batches.
    static int64_t batchFor(int64_t samples);

Q_SIGNALS:
    /// `done` of `total` samples of the model named `name`; `secondsLeft` < 0 while unknown.
    void progress(const QString& name, qint64 done, qint64 total, double secondsLeft);
    void measured(const DrawnSamples& drawn);
    /// Nothing left to draw (every model done, or cancelled).
    void idle();

private:
    struct Job {
        QString id;
        QString name;
        std::string path;
        int64_t samples = 0;
    };
    void startNext();

    std::deque<Job> m_queue;
    std::optional<Job> m_running;
    std::shared_ptr<StopToken> m_stop;
    QFutureWatcher<DrawnSamples>* m_watcher = nullptr;
    QElapsedTimer m_clock;
};

} // namespace d2dpo::ui
