// SPDX-License-Identifier: GPL-3.0-or-later
// How a trainer reports to whoever runs it (the CLI's progress bar, the GUI's worker adapter):
// plain-struct events through a small listener interface, and a thread-safe stop request that
// the trainer checks every step. Nothing here throws across a thread boundary.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "base/runstatus.h"
#include "base/samplemetrics.h"

namespace d2dpo {

/// Implicit-reward statistics of one D2-DPO batch, named as DPO tools name them.
struct RewardStats {
    double chosen = 0;     ///< rewards/chosen: mean of beta * D(x_t^w | x_1^w)
    double rejected = 0;   ///< rewards/rejected: mean of beta * D(x_t^l | x_1^l)
    double margins = 0;    ///< rewards/margins: mean of chosen - rejected
    double accuracies = 0; ///< rewards/accuracies: share of pairs with a positive margin
};

struct ProgressEvent {
    int64_t step = 0;       ///< steps completed
    int64_t totalSteps = 0;
    double loss = 0;
    std::optional<RewardStats> rewards; ///< set by D2-DPO training
    double stepsPerSecond = 0;
    double elapsedSeconds = 0;
};

struct EvaluationEvent {
    int64_t step = 0;
    SampleMetrics metrics;
    bool ofReference = false; ///< the reference model measured before training (the baselines)
};

struct CheckpointEvent {
    int64_t step = 0;
    std::string path;
};


struct FinishedEvent {
    RunStatus status = RunStatus::Completed;
    int64_t stepsDone = 0;
    std::string error;              ///< why a failed run failed, for the user
    std::string lastCheckpointPath; ///< the last good checkpoint written, if any
    std::string bestCheckpointPath; ///< DpoScheduleConfig::keepBest's checkpoint (best.d2dpo), if one was kept
    std::string bestDescription;    ///< which step it is and why ("step 150: odd_ratio 0.97, VSR ..."), or why none
    double elapsedSeconds = 0;
};

class TrainListener {
public:
    virtual ~TrainListener() = default;
    virtual void onProgress(const ProgressEvent&) {}
    virtual void onEvaluation(const EvaluationEvent&) {}
    /// An evaluation under way (the reference's measurement, or a step's): its samples drawn so far
    /// of `total`, a fraction within a batch as its passes go (at most every 0.2 s), so a view shows
    /// how far a long measurement is and the time it has left.
    virtual void onEvaluationProgress(double /*drawn*/, int64_t /*total*/) { }
    virtual void onCheckpoint(const CheckpointEvent&) {}
    virtual void onFinished(const FinishedEvent&) {}
    /// A line for the user's event log (what was loaded, on which device, how many pairs).
    virtual void onLog(const std::string&) {}
};

/// A stop request any thread may raise; the trainer polls it once per step. A token made from
/// another also stops when that one does (a job adds its own reasons to its caller's).
class StopToken {
public:
    StopToken() = default;
    explicit StopToken(const StopToken* alsoWhen) : m_alsoWhen(alsoWhen) {}
    StopToken(const StopToken&) = delete;
    StopToken& operator=(const StopToken&) = delete;
    void requestStop() { m_stop.store(true, std::memory_order_relaxed); }
    bool stopRequested() const
    {
        return m_stop.load(std::memory_order_relaxed) || (m_alsoWhen && m_alsoWhen->stopRequested());
    }
    void reset() { m_stop.store(false, std::memory_order_relaxed); }

private:
    std::atomic<bool> m_stop{false};
    const StopToken* m_alsoWhen = nullptr;
};

/// A TrainListener that is also told when a phase of a longer job starts (pretraining, measuring
/// the reference, D2-DPO).
class PhaseListener : public TrainListener {
public:
    /// phase: "pretrain", "evaluate-reference", "d2dpo"; totalSteps: 0 when not step-based.
    virtual void onPhase(const std::string& phase, int64_t totalSteps) {}
};


} // namespace d2dpo
