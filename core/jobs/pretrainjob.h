// SPDX-License-Identifier: GPL-3.0-or-later
// Pretraining a reference model as `d2dpo pretrain` starts it: fit a denoiser to the task's
// data, measure it with the sampler, and write it as a pretrained checkpoint. Torch-free header.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/result.h"
#include "base/samplebudget.h"
#include "base/samplemetrics.h"
#include "base/trainlistener.h"

namespace d2dpo {

struct PretrainJobSpec {
    ModelSpec spec;
    PretrainConfig pretrain;
    SamplingConfig sampling;     ///< for the final evaluation
    int64_t evaluationSamples = 2000;
    double evaluationSeconds = 0; ///< > 0: as many samples as fit in about this time, at most evaluationSamples
    uint64_t seed = 0;
    std::string device = "auto"; ///< "auto", "cpu", "cuda", "cuda:N"
    std::string outputPath;      ///< the checkpoint file to write
    std::string storePath;       ///< when given, the new model (and its task) is added to this store
    std::string modelName;       ///< its name there; "" = the checkpoint's file name
    std::vector<std::string> inputs; ///< files the caller read (the data file): the output may not be one
    int64_t snapshotEvery = 0;   ///< also write the model every this many steps (snapshotPath); 0 = never
    /// What a stop leaves: true, the steps done (the CLI's Ctrl-C keeps the work); false, nothing
    /// written and nothing added to the store, even when it comes after the evaluation (a
    /// dialog's Cancel). Snapshots already written stay either way.
    bool keepWhenStopped = true;
};

/// During a job's evaluation (a pretraining's, an import's), after its passes and batches: samples
/// drawn so far (a fraction within a batch, from its passes), and the total.
using EvaluationProgress = std::function<void(double done, int64_t total)>;

/// Where the snapshot after `step` goes: "words.d2dpo" -> "words.step1000.d2dpo", beside it.
std::string snapshotPath(const std::string& outputPath, int64_t step);

struct PretrainJobOutcome {
    int64_t parameters = 0;
    SampleMetrics metrics; ///< the reference's evaluation, stored in the checkpoint too
    std::string checkpointId;
    bool stopped = false;  ///< stopped early: the steps done, unevaluated (or nothing: keepWhenStopped)
    int64_t steps = 0;     ///< pretraining steps in the checkpoint
    std::vector<std::string> snapshots; ///< the snapshots written, in step order
};

/// Runs in the calling thread; once the spec is valid, `listener` hears the phases "pretrain"
/// (with a log line of the parameter count, then the steps' progress), "evaluate-reference" (no
/// steps: `evaluationProgress` hears its sampler batches) and "write" (the checkpoint, and the
/// store when given). The output is checked before training (base/safeoutput.h), and so is the
/// first snapshot's. Snapshots are not evaluated (`d2dpo eval` measures one) nor added to the
/// store; the constant learning rate and the per-step data make the snapshot after step k the
/// model a k-step pretraining writes. A stop ends the training after its step and the evaluation
/// before its next batch; then the steps done are written unevaluated (outcome.stopped), or nothing
/// when !spec.keepWhenStopped. Failed training is an error, and so is a store that cannot take
/// the model (the checkpoint is written all the same).
Result<PretrainJobOutcome> runPretrainJob(const PretrainJobSpec& spec, PhaseListener& listener,
                                          const StopToken& stop, const EvaluationProgress& evaluationProgress = {});

} // namespace d2dpo
