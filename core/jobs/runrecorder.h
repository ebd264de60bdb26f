// SPDX-License-Identifier: GPL-3.0-or-later
// Mirrors a D2-DPO run into the store as it happens: its metric series, and each checkpoint as a
// model of the run the moment it is written (so a run that dies leaves its checkpoints listed,
// ready to resume or export). Metric points are buffered and written in one transaction every so
// often (a durable commit per step would cost more than a small training step), and always at
// evaluations, checkpoints and the end. While a team store cannot be reached (a server restart, a
// network cut) the points and the checkpoints' records are kept and sent once it answers again.
// Holds back onFinished: the job forwards it once the run's
// status is recorded, so whoever listens finds the fine-tuned model already in the store.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/trainlistener.h"
#include "store/preferencestore.h"

namespace d2dpo {

class RunRecorder final : public TrainListener {
public:
    /// `store` may be null: then events are only forwarded. `stopWhenLost` is raised when the store's
    /// file is removed or replaced under the run (nothing more could be recorded): see lostStore().
    RunRecorder(TrainListener& forward, PreferenceStore* store, int64_t runId, StopToken& stopWhenLost);
    ~RunRecorder() override;

    void onProgress(const ProgressEvent& e) override;
    void onEvaluation(const EvaluationEvent& e) override;
    void onCheckpoint(const CheckpointEvent& e) override;
    void onFinished(const FinishedEvent& e) override;
    void onLog(const std::string& line) override { m_forward.onLog(line); }
    void onEvaluationProgress(double drawn, int64_t total) override { m_forward.onEvaluationProgress(drawn, total); }

    const std::optional<FinishedEvent>& finished() const { return m_finished; }
    /// The model the newest checkpoint was recorded as ("" when none was).
    const std::string& lastModelId() const { return m_lastModelId; }
    /// Record `path` as a model of the run now (a checkpoint written before this recorder).
    Status recordCheckpoint(const std::string& path);
    /// Why the store can no longer record the run ("" while it can).
    const std::string& lostStore() const { return m_lostStore; }
    /// The first write the store refused for a reason other than being out of reach (a full disk,
    /// a read-only file): "" while every write landed. A run with one must not end as a success.
    const std::string& failedWrite() const { return m_failedWrite; }
    /// Sends what waits (metrics and checkpoints kept while a team store could not be reached);
    /// true when nothing is left waiting.
    bool everythingRecorded();

    /// Metric points kept at most while the store cannot be reached (the oldest beyond go).
    static constexpr size_t kMaxKeptPoints = 500'000;

private:
    void record(int64_t step, const std::string& name, double value);
    void flush();
    /// Says a refused write as a warning now, and keeps the first for failedWrite().
    void noteFailedWrite(const std::string& error);
    /// Says once, while it lasts, that the store cannot be reached and what is kept.
    void noteUnreachable(const std::string& error);
    /// False (and the run asked to stop) once the store's file is gone from its path.
    bool storeStillThere();

    TrainListener& m_forward;
    PreferenceStore* m_store;
    int64_t m_runId;
    std::vector<MetricPoint> m_pending;
    std::optional<FinishedEvent> m_finished;
    std::string m_lastModelId;
    StopToken& m_stopWhenLost;
    std::string m_lostStore;
    std::string m_failedWrite;
    std::vector<std::string> m_unrecordedCheckpoints; ///< written while the store could not be reached
    bool m_unreachable = false;
    bool m_droppedPoints = false;
};

} // namespace d2dpo
