// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/runending.h"

#include <filesystem>

#include <torch/types.h>

#include "facades/checkpointrecord.h"
#include "io/checkpoint.h"
#include "store/preferencestore.h"
#include "store/storename.h"

namespace d2dpo {

Result<std::string> recordRunCheckpoint(PreferenceStore& store, int64_t runId, const std::string& path)
{
    auto written = loadCheckpoint(path, torch::kCPU);
    if (!written)
        return makeError("the checkpoint cannot be read back: " + written.error());
    // The kept best (DpoScheduleConfig::keepBest) is a model of the run, never its result: that is the
    // last weights.
    const bool best = std::filesystem::path(path).filename() == "best.d2dpo";
    const std::string step = std::to_string(written->info.step);
    ModelRecord model =
        modelRecordFor(written->info, path,
                       "d2dpo run " + std::to_string(runId) + (best ? " best (step " + step + ")" : " step " + step));
    model.runId = runId;
    auto known = store.model(model.id);
    if (!known)
        return makeError(known.errorCode(), known.error());
    if (!known->has_value())
        if (Status s = store.addModel(model); !s)
            return makeError(s.errorCode(), s.error());
    return model.id;
}

Status recordRunEnd(PreferenceStore& store, int64_t runId, RunStatus status, const std::string& error,
                    const std::string& checkpointPath)
{
    std::string resultModelId;
    if (!checkpointPath.empty()) {
        auto recorded = recordRunCheckpoint(store, runId, checkpointPath);
        if (!recorded)
            return makeError(recorded.errorCode(), recorded.error());
        resultModelId = recorded.value();
    }
    return store.finishRun(runId, status, error, resultModelId);
}

std::string unrecordedEndMessage(RunStatus status, const std::string& error, const std::string& storeError,
                                 const std::string& checkpointPath, const std::string& then)
{
    return std::string("the run ended (") + toString(status) + (error.empty() ? std::string() : ": " + error) +
           ") but the store could not record it: " + storeError +
           (checkpointPath.empty() ? std::string() : "; its checkpoint: " + checkpointPath) +
           (then.empty() ? std::string() : "; " + then);
}

std::string recordRunLaterCommand(const std::string& storePath, int64_t runId, RunStatus status,
                                  const std::string& checkpointPath)
{
    std::string command = "d2dpo store record-run --db '" + storeNameForMessages(storePath) + "' --run " +
                          std::to_string(runId) + " --status " + toString(status);
    if (!checkpointPath.empty())
        command += " --checkpoint '" + checkpointPath + "'";
    return command;
}

} // namespace d2dpo
