// SPDX-License-Identifier: GPL-3.0-or-later
// The states of a training run, as the trainer ends one and the store records it, with the
// questions the views ask of them. One enum everywhere: no view compares a status text.
#pragma once

#include <optional>
#include <string>

namespace d2dpo {

enum class RunStatus {
    Running,     ///< a process is training it now (its run lock is held)
    Completed,   ///< trained every planned step
    Stopped,     ///< stopped on request, with its last checkpoint
    Interrupted, ///< its process died without stopping it (killed, crashed, machine down)
    Failed,      ///< ended by an error, said in the run's record
};

/// "running", "completed", "stopped", "interrupted" or "failed": the store's spelling.
const char* toString(RunStatus status);
std::optional<RunStatus> runStatusFromString(const std::string& text);

/// A stopped or interrupted run can continue from its newest checkpoint.
inline bool isResumable(RunStatus status) { return status == RunStatus::Stopped || status == RunStatus::Interrupted; }
/// Completed or stopped: its newest model is a whole result to train from or export.
inline bool endedCleanly(RunStatus status) { return status == RunStatus::Completed || status == RunStatus::Stopped; }

} // namespace d2dpo
