// SPDX-License-Identifier: GPL-3.0-or-later
// The rules a D2-DPO run follows wherever it is started from (the Train view, `d2dpo train`,
// `d2dpo export`): where its checkpoints go, how often they are written, which stored labels it
// can train on, and what the model card of an exported model says about the run that made it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/config.h"
#include "jobs/dpojob.h"
#include "jobs/exporter.h"
#include "store/preferencestore.h"

namespace d2dpo {

/// A new folder for a run's checkpoints beside the store:
/// <store's folder>/runs/<local time yyyyMMdd-HHmmss>-<reference model id>.
std::string newRunFolder(const std::string& storePath, const std::string& referenceModelId);

/// Runs started from the desktop write a checkpoint at every evaluation, so the models listed for
/// a stopped run are the ones whose metrics were measured.
void checkpointAtEveryEvaluation(DpoConfig& config);

/// Runs started from the desktop leave one core to the GUI thread, beyond those other processes
/// keep busy (2 training threads on 2 cores stalled the GUI thread for 48 ms, 1 for 7 ms).
void leaveACoreForTheGui(DpoJobSpec& job);

/// The store's decisive labels as a model of the task with key `task` sees them.
struct UsablePairs {
    int64_t usable = 0;         ///< left/right labels of that task's sequences by the chosen labelers
    int64_t otherTask = 0;      ///< labels of other tasks' sequences (left out of the run, and counted)
    int64_t otherLabelers = 0;  ///< labels of the task by labelers not chosen (left out, and counted)
};
/// `labelers` empty: every labeler's labels count.
UsablePairs countUsablePairs(const std::vector<PreferenceRecord>& preferences, const std::string& task,
                             const std::vector<std::string>& labelers = {});

/// A simulated expert ("rule:odd", as `d2dpo label` and auto-labelling record it) rather than a person.
bool isSimulatedLabeler(const std::string& labeler);

/// Who labelled a task's sequences, with their decisive-label counts, people first.
struct LabelerCount {
    std::string labeler;
    int64_t decisive = 0;
    bool simulated = false;
};
std::vector<LabelerCount> labelersOf(const std::vector<PreferenceRecord>& preferences, const std::string& task);

/// The store's model whose checkpoint file is `path` (the same file, however named), or nothing.
Result<std::optional<ModelRecord>> modelStoredAt(PreferenceStore& store, const std::string& path);

/// Export options for a stored model: the preference counts and the run (status, device, times,
/// config) that made it, for the model card's lineage. Defaults when the model has no run.
ExportOptions exportOptionsFor(PreferenceStore& store, const ModelRecord& model);

/// exportOptionsFor() the model of the store at `storePath` whose file is `checkpointPath`; the
/// defaults when no store exists there (none is created) or it holds no such model.
Result<ExportOptions> exportOptionsForCheckpoint(const std::string& storePath, const std::string& checkpointPath);

} // namespace d2dpo
