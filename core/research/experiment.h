// SPDX-License-Identifier: GPL-3.0-or-later
// The paper's experiment end to end, on any task with a rule: pretrain on the task's data
// (binary integers in the paper), evaluate the reference, fine-tune with D2-DPO on rule-made pairs
// (odd preferred over even in the paper) evaluating every few steps, and collect every curve and
// the wall time of each phase.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/result.h"
#include "base/trainlistener.h"

namespace d2dpo {

struct ReproduceConfig {
    ModelSpec spec;
    PretrainConfig pretrain;
    DpoConfig dpo;
    DpoScheduleConfig schedule;
    SamplingConfig sampling;
    int64_t preferencePairs = 20000; ///< rule-made pairs in the training set
    uint64_t seed = 0;
    std::string outputFolder;        ///< checkpoints and curves; empty: write nothing
    std::string referenceCheckpoint; ///< start from this pretrained model (its spec replaces `spec`): no pretraining
    int gradientDraws = 0;           ///< > 0: measure the gradient's spread over this many draws before D2-DPO
};

struct ReproduceReport {
    ReproduceConfig config;
    std::string runtime;                     ///< device, threads, BLAS
    std::vector<ProgressEvent> pretrainProgress;
    std::vector<ProgressEvent> dpoProgress;
    std::vector<EvaluationEvent> evaluations; ///< step 0 is the reference model
    SampleMetrics reference;
    SampleMetrics finetuned;
    FinishedEvent pretrainFinished;
    FinishedEvent dpoFinished;
    double pretrainSeconds = 0;
    double referenceEvalSeconds = 0;
    double dpoSeconds = 0;
    std::string referenceCheckpoint;
    std::string finetunedCheckpoint;
    std::string sampler;          ///< how evaluations sample ("exact sampler (one position per pass)")
    double gradientStd = 0;       ///< ReproduceConfig::gradientDraws's measurement (0 when not measured)
    double gradientMeanNorm = 0;
};

Status validate(const ReproduceConfig& config);

/// Runs the experiment in the calling thread. Failure of any phase comes back as an error.
Result<ReproduceReport> reproduce(const ReproduceConfig& config, const std::string& device,
                                  PhaseListener& listener, const StopToken& stop);

} // namespace d2dpo
