// SPDX-License-Identifier: GPL-3.0-or-later
// A TrainListener that keeps every event a trainer or a job reports, for the suites to read back;
// it can also raise the stop token, or run an action, at a given step.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/trainlistener.h"

namespace d2dpo::test {

class ListenerRecorder final : public TrainListener {
public:
    std::vector<ProgressEvent> progress;
    std::vector<EvaluationEvent> evaluations;
    std::vector<CheckpointEvent> checkpoints;
    std::vector<FinishedEvent> finished;
    std::vector<std::pair<double, int64_t>> evaluationProgress; ///< (drawn, total) as heard
    std::string log;                  ///< every log line, each ended with '\n'
    std::atomic<int64_t> lastStep{0}; ///< readable from another thread while the run goes on
    int64_t stopAt = -1;              ///< raise `stop` when this step is reported
    StopToken* stop = nullptr;
    int64_t actAt = -1; ///< run `action` when this step is reported
    std::function<void()> action;
    std::map<int64_t, std::function<void()>> actions; ///< more of them, by step
    std::function<void(const std::string&)> onLine;   ///< called with each log line

    void onProgress(const ProgressEvent& e) override
    {
        progress.push_back(e);
        lastStep = e.step;
        if (e.step == stopAt && stop)
            stop->requestStop();
        if (e.step == actAt && action)
            action();
        if (const auto found = actions.find(e.step); found != actions.end())
            found->second();
    }
    void onEvaluation(const EvaluationEvent& e) override { evaluations.push_back(e); }
    void onEvaluationProgress(double drawn, int64_t total) override { evaluationProgress.emplace_back(drawn, total); }
    void onCheckpoint(const CheckpointEvent& e) override { checkpoints.push_back(e); }
    void onFinished(const FinishedEvent& e) override { finished.push_back(e); }
    void onLog(const std::string& line) override
    {
        log += line + "\n";
        if (onLine)
            onLine(line);
    }

    /// The last evaluation reported at `step` (step 0: the reference's), or null.
    const EvaluationEvent* evaluationAt(int64_t step) const
    {
        for (auto e = evaluations.rbegin(); e != evaluations.rend(); ++e)
            if (e->step == step)
                return &*e;
        return nullptr;
    }
};

} // namespace d2dpo::test
