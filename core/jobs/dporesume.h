// SPDX-License-Identifier: GPL-3.0-or-later
// Resuming a D2-DPO run that was stopped or interrupted: where it left off (its newest recorded
// checkpoint and the optimizer state beside it) and the job that continues it with the settings
// it was started with. Torch-free: the CLI's `train --resume` and the GUI's Resume use it.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"
#include "jobs/dpojob.h"
#include "store/preferencestore.h"

namespace d2dpo {

struct ResumePoint {
    int64_t step = 0;            ///< the steps already done (0: no checkpoint, start from the reference)
    std::string checkpointPath;  ///< "" when the run wrote none
    std::string modelId;         ///< the checkpoint as a model of the store
    std::string optimizerState;  ///< the ".adam" file beside it; "" when missing (Adam restarts)
};

/// Where the run `runId` of `store` continues from; refuses a run that is running, completed or
/// failed, and one that is not a D2-DPO run.
Result<ResumePoint> findResumePoint(PreferenceStore& store, int64_t runId);

/// The job that continues run `runId` of the store at `storePath`, with the settings recorded
/// when it started (its reference, preferences, seed, folder); `device` and `threads` may differ.
Result<DpoJobSpec> resumeJobSpec(const std::string& storePath, int64_t runId);

} // namespace d2dpo
