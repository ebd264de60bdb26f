// SPDX-License-Identifier: GPL-3.0-or-later
// A run's checkpoints and its end, as the store records them. A run records each checkpoint as a
// model of the run when it is written and its end when it stops; one that could not reach its
// (team) store at the end says how to record it later, and `d2dpo store record-run` does it.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"
#include "base/runstatus.h"

namespace d2dpo {

class PreferenceStore;

/// Records the checkpoint at `path` as a model of run `runId` (named by its step; the kept best
/// as such), unless the store has it already; its model id.
Result<std::string> recordRunCheckpoint(PreferenceStore& store, int64_t runId, const std::string& path);

/// Records how run `runId` ended: its last checkpoint (when given) as a model of the run and as the
/// run's result, then its status and error.
Status recordRunEnd(PreferenceStore& store, int64_t runId, RunStatus status, const std::string& error,
                    const std::string& checkpointPath);

/// A run's error once its store could not record its end: how it ended (`status`, `error`), why the
/// store refused (`storeError`), where its checkpoint is, and `then` (how to record it later).
std::string unrecordedEndMessage(RunStatus status, const std::string& error, const std::string& storeError,
                                 const std::string& checkpointPath, const std::string& then = "");

/// The command that records such an end later, as a user types it (the store without a password).
std::string recordRunLaterCommand(const std::string& storePath, int64_t runId, RunStatus status,
                                  const std::string& checkpointPath);

} // namespace d2dpo
