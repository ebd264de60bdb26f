// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/runrecorder.h"

#include <filesystem>

#include "base/metricnames.h"
#include "jobs/runending.h"

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
    if (Status s = recordCheckpoint(e.path); !s) {
        if (s.errorCode() == ErrorCode::Unreachable) {
            m_unrecordedCheckpoints.push_back(e.path); // recorded when the server is back
            noteUnreachable(s.error());
        } else {
            noteFailedWrite(s.error());
        }
    }
    m_forward.onCheckpoint(e);
}

void RunRecorder::noteFailedWrite(const std::string& error)
{
    m_forward.onLog("warning: " + error);
    if (m_failedWrite.empty())
        m_failedWrite = error;
}

void RunRecorder::noteUnreachable(const std::string& error)
{
    if (!m_unreachable)
        m_forward.onLog("warning: " + error +
                        "; the run goes on, and what it records is kept here and written "
                        "when the store is back");
    m_unreachable = true;
}

Status RunRecorder::recordCheckpoint(const std::string& path)
{
    if (!m_store || m_runId <= 0)
        return Ok{};
    if (!storeStillThere())
        return makeError(m_lostStore);
    auto recorded = recordRunCheckpoint(*m_store, m_runId, path);
    if (!recorded)
        return makeError(recorded.errorCode(), recorded.error());
    if (std::filesystem::path(path).filename() != "best.d2dpo") // the kept best is never the result
        m_lastModelId = recorded.value();
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
    if (!m_store || (m_pending.empty() && m_unrecordedCheckpoints.empty()))
        return;
    if (!storeStillThere()) {
        m_pending.clear();
        return;
    }
    if (!m_pending.empty()) {
        if (Status s = m_store->appendMetrics(m_runId, m_pending); !s) {
            if (s.errorCode() == ErrorCode::Unreachable) {
                // A server restarting or a network cut: kept, and sent with the next flush.
                noteUnreachable(s.error());
                if (m_pending.size() > kMaxKeptPoints) {
                    m_pending.erase(m_pending.begin(), m_pending.end() - std::ptrdiff_t(kMaxKeptPoints));
                    m_droppedPoints = true;
                }
                return;
            }
            noteFailedWrite(s.error());
        } else if (m_unreachable) {
            m_forward.onLog("the store is back: " + std::to_string(m_pending.size()) +
                            " metric points kept while it could not be reached are written" +
                            (m_droppedPoints ? " (the oldest beyond " + std::to_string(kMaxKeptPoints) + " were not)"
                                             : std::string()));
        }
        m_pending.clear();
    }
    std::vector<std::string> checkpoints = std::move(m_unrecordedCheckpoints);
    m_unrecordedCheckpoints.clear();
    for (size_t i = 0; i < checkpoints.size(); ++i)
        if (Status s = recordCheckpoint(checkpoints[i]); !s) {
            if (s.errorCode() != ErrorCode::Unreachable) {
                noteFailedWrite(s.error());
                continue;
            }
            noteUnreachable(s.error());
            m_unrecordedCheckpoints.assign(checkpoints.begin() + std::ptrdiff_t(i), checkpoints.end());
            return;
        }
    m_unreachable = false;
    m_droppedPoints = false;
}

bool RunRecorder::everythingRecorded()
{
    flush();
    return m_pending.empty() && m_unrecordedCheckpoints.empty();
}

} // namespace d2dpo
