// SPDX-License-Identifier: GPL-3.0-or-later
// Evaluate a model the way the paper does: draw samples with the configured sampler and measure
// them with the task's declared metrics (VSR, the rule's share, diversity, the histogram).
// Samples are drawn one sampler batch at a time (the same draws as one call), so a long
// evaluation reports its progress and hears a stop between batches.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include <torch/types.h>

#include "base/config.h"
#include "base/samplebudget.h"
#include "base/samplemetrics.h"
#include "base/trainlistener.h"
#include "model/denoiser.h"
#include "tasks/task.h"

namespace d2dpo {

class Sampler;

/// Thrown by a sampling loop when its stop token is raised: the caller ends as stopped.
struct EvaluationStopped : std::runtime_error {
    EvaluationStopped() : std::runtime_error("stopped during an evaluation") {}
};

/// Samples drawn so far (within a batch, the fraction its passes have done), and the total: heard
/// after each batch and, within one, at most every 0.2 s between passes, so a bar moves and a
/// time left shows from the first seconds at any model size.
using SamplingProgress = std::function<void(double done, int64_t total)>;

/// `count` samples -> [count, D] on the model's device, `batch` at a time; throws
/// EvaluationStopped when `stop` is raised before a pass.
torch::Tensor drawSamples(Sampler& sampler, int64_t count, int64_t batch, torch::Generator& generator,
                          const StopToken* stop = nullptr, const SamplingProgress& progress = {});

/// What `budget` draws from `model` with `sampler`: budget.most, or when fitted the count that fits
/// its time at the cost of one timed pass over `rows` sequences (after an untimed one that pays
/// for first-call set-up), times the sampler's passes per batch.
struct FittedCount {
    int64_t samples = 0;
    double secondsPerSample = 0; ///< 0 when not timed (a fixed count)
    std::string describe() const; ///< "200 samples (about 0:30, 0.15 s a sample)", or "2000 samples"
};
FittedCount fitSampleCount(DenoiserModel& model, const Sampler& sampler, const SampleBudget& budget, int64_t rows = 16);
/// Seconds one sequence costs in one pass of `model`, timed on a pass over `rows` of them (after an
/// untimed one).
double timeRowPass(DenoiserModel& model, int64_t rows = 16);
/// fitSampleCount() with the sampler evaluateModel() draws with.
FittedCount fitEvaluationCount(Denoiser& model, const Task& task, const NoiseConfig& noise,
                               const SamplingConfig& sampling, const SampleBudget& budget);

/// The count a job's evaluation draws (fitEvaluationCount); a fitted one is said in log lines
/// before and after the timed pass ("measuring on 200 samples (about 0:30, 0.15 s a sample)") and
/// gets batches of its size (evaluationBatchFor, never larger than `sampling`'s).
FittedCount fittedEvaluationCount(Denoiser& model, const Task& task, const NoiseConfig& noise, SamplingConfig& sampling,
                                  const SampleBudget& budget, TrainListener& listener);

/// Starts counting the model's passes whose logits hold NaN or infinities (models brought in as
/// TorchScript; the count stays on the device), and, called again after the draw, adds that count
/// to `metrics` as "non_finite_passes" when there were any.
void startCountingNonFinitePasses(DenoiserModel& model);
void reportNonFinitePasses(DenoiserModel& model, SampleMetrics& metrics);

/// Draw `count` samples from `model` and measure them with the task. Throws EvaluationStopped
/// when `stop` is raised before the last batch.
SampleMetrics evaluateModel(Denoiser& model, const Task& task, const NoiseConfig& noise,
                            const SamplingConfig& sampling, int64_t count, torch::Generator& generator,
                            const StopToken* stop = nullptr, const SamplingProgress& progress = {});

} // namespace d2dpo
