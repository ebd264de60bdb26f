// SPDX-License-Identifier: GPL-3.0-or-later
// The Models view's measurements, drawn in the background one model at a time: each model's
// samples (as many as the view asks for, or as many as fit its time at the model's cost) and their
// figures. Progress per pass with an estimate of the time left, a result as each model is done,
// and a cancel that ends the draws before the next pass.
#pragma once

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <deque>
#include <memory>
#include <optional>

#include "base/samplebudget.h"
#include "facades/modelfiles.h"
#include "store/preferencestore.h"

namespace d2dpo::ui {

/// One model's samples, drawn in the background.
struct DrawnSamples {
    QString modelId;
    SampleBudget budget; ///< what the view asked for (the summary's count is what it got)
    std::optional<ModelSummary> summary;
    QString error;
};

class ModelMeasurer final : public QObject {
    Q_OBJECT

public:
    explicit ModelMeasurer(QObject* parent = nullptr);
    ~ModelMeasurer() override; ///< stops and waits for the draw in flight

    /// Queues these models (those queued or in flight already are not queued twice). The first
    /// model's count (when fitted) and batches (sized so that a pass takes about kPassSeconds: a
    /// Cancel is heard between passes) are used for the others of the call: a model and its
    /// reference compare on the same draws.
    void measure(const std::vector<ModelRecord>& models, const SampleBudget& budget);
    /// Stops the draw in flight before its next pass and forgets the queue.
    void cancel();
    bool busy() const { return m_running.has_value() || !m_queue.empty(); }
    /// The batch each measurement draws at once: progress and a stop come between batches.
    static int64_t batchFor(int64_t samples);
    /// The longest a pass of a measurement should take: a Cancel waits at most about this long.
    static constexpr double kPassSeconds = 0.5;

Q_SIGNALS:
    /// `done` of `total` samples of the model named `name`; `secondsLeft` < 0 while unknown;
    /// `total` 0 while a fitted count is not known yet (its pass is being timed).
    void progress(const QString& name, qint64 done, qint64 total, double secondsLeft);
    void measured(const DrawnSamples& drawn);
    /// Nothing left to draw (every model done, or cancelled).
    void idle();

private:
    struct Job {
        QString id;
        QString name;
        std::string path;
        SampleBudget budget; ///< as asked
        SampleBudget drawn;  ///< as drawn: the asked one, or the count fitted for its call's first model
        int64_t batch = 0;   ///< > 0: the batches its call's first model was drawn in (the same draws)
        int call = 0;        ///< which measure() queued it
    };
    void startNext();

    std::deque<Job> m_queue;
    std::optional<Job> m_running;
    std::shared_ptr<StopToken> m_stop;
    QFutureWatcher<DrawnSamples>* m_watcher = nullptr;
    QElapsedTimer m_clock;
    int m_calls = 0;
};

} // namespace d2dpo::ui
