// SPDX-License-Identifier: GPL-3.0-or-later
// Pretraining a reference model as `d2dpo pretrain` starts it: fit a denoiser to the task's
// data, measure it with the sampler, and write it as a pretrained checkpoint. Torch-free header.
#pragma once

#include <cstdint>
#include <string>

#include "base/config.h"
#include "base/result.h"
#include "base/samplemetrics.h"
#include "base/trainlistener.h"
#include "jobs/experiment.h"

namespace d2dpo {

struct PretrainJobSpec {
    ModelSpec spec;
    PretrainConfig pretrain;
    SamplingConfig sampling;     ///< for the final evaluation
    int64_t evaluationSamples = 2000;
    uint64_t seed = 0;
    std::string device = "auto"; ///< "auto", "cpu", "cuda", "cuda:N"
    std::string outputPath;      ///< the checkpoint file to write
};

struct PretrainJobOutcome {
    int64_t parameters = 0;
    SampleMetrics metrics; ///< the reference's evaluation, stored in the checkpoint too
    std::string checkpointId;
};

/// Runs in the calling thread; once the spec is valid, `listener` hears the "pretrain" phase, a
/// log line with the parameter count, and the progress. Stopped or failed training is an error.
Result<PretrainJobOutcome> runPretrainJob(const PretrainJobSpec& spec, ExperimentListener& listener,
                                          const StopToken& stop);

} // namespace d2dpo
