// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/runrecorder.h"

#include <filesystem>

#include <torch/types.h>

#include "base/metricnames.h"
#include "io/checkpoint.h"
#include "facades/checkpointrecord.h"

namespace d2dpo {

RunRecorder::RunRecorder(TrainListener& forward, PreferenceStore* store, int64_t runId, StopToken& stopWhenLost)
    : m_forward(forward)
    , m_store(store)
    , m_runId(runId)
    , m_stopWhenLost(stopWhenLost)
{
}

bool RunRecorder::storeStillThere()
{
    if (!m_lostStore.empty())
        return false;
    // SQLite writes to a deleted file without a word: each write would vanish with the run.
    if (Status s = m_store->stillAtItsPath(); !s) {
        m_lostStore = s.error();
        m_forward.onLog("error: " + m_lostStore + "; the run stops (its checkpoints stay in their folder)");
        m_stopWhenLost.requestStop();
        return false;
    }
    return true;
}

RunRecorder::~RunRecorder() { flush(); }

void RunRecorder::onProgress(const ProgressEvent& e)
{
    record(e.step, metric::kLoss, e.loss);
    if (e.rewards)
        for (const auto& [name, value] : metric::named(*e.rewards))
            record(e.step, name, value);
    record(e.step, metric::kStepsPerSecond, e.stepsPerSecond);
    if (m_pending.size() >= 200)
        flush();
    m_forward.onProgress(e);
}

void RunRecorder::onEvaluation(const EvaluationEvent& e)
{
    for (const auto& [name, value] : metric::recorded(e.metrics))
        record(e.step, e.ofReference ? metric::ofReference(name) : std::string(name), value);
    flush();
    m_forward.onEvaluation(e);
}

void RunRecorder::onCheckpoint(const CheckpointEvent& e)
{
    flush(); // the curves up to the checkpoint survive with it
    if (Status s = recordCheckpoint(e.path); !s)
        m_forward.onLog("warning: " + s.error());
    m_forward.onCheckpoint(e);
}

Status RunRecorder::recordCheckpoint(const std::string& path)
{
    if (!m_store || m_runId <= 0)
        return Ok{};
    if (!storeStillThere())
        return makeError(m_lostStore);
    auto written = loadCheckpoint(path, torch::kCPU);
    if (!written)
        return makeError("the checkpoint cannot be read back: " + written.error());
    // The kept best (DpoScheduleConfig::keepBest) is a model of the run, never its result: that is the
    // last weights.
    const bool best = std::filesystem::path(path).filename() == "best.d2dpo";
    const std::string step = std::to_string(written->info.step);
    ModelRecord model = modelRecordFor(written->info, path,
                                       "d2dpo run " + std::to_string(m_runId) +
                                           (best ? " best (step " + step + ")" : " step " + step));
    model.runId = m_runId;
    if (Status s = m_store->addModel(model); !s)
        return s;
    if (!best)
        m_lastModelId = model.id;
    return Ok{};
}

void RunRecorder::onFinished(const FinishedEvent& e)
{
    flush();
    m_finished = e;
}

void RunRecorder::record(int64_t step, const std::string& name, double value)
{
    if (m_store)
        m_pending.push_back({step, name, value});
}

void RunRecorder::flush()
{
    if (!m_store || m_pending.empty())
        return;
    if (!storeStillThere()) {
        m_pending.clear();
        return;
    }
    if (Status s = m_store->appendMetrics(m_runId, m_pending); !s)
        m_forward.onLog("warning: " + s.error());
    m_pending.clear();
}

} // namespace d2dpo
