// SPDX-License-Identifier: GPL-3.0-or-later
// Evaluate a model the way the paper does: draw samples with the configured sampler and measure
// them with the task's declared metrics (VSR, the rule's share, diversity, the histogram).
// Samples are drawn one sampler batch at a time (the same draws as one call), so a long
// evaluation reports its progress and hears a stop between batches.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>

#include <torch/types.h>

#include "base/config.h"
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

/// After each batch: samples drawn so far, and the total.
using SamplingProgress = std::function<void(int64_t done, int64_t total)>;

/// `count` samples -> [count, D] on the model's device, `batch` at a time; throws
/// EvaluationStopped when `stop` is raised before a batch.
torch::Tensor drawSamples(Sampler& sampler, int64_t count, int64_t batch, torch::Generator& generator,
                          const StopToken* stop = nullptr, const SamplingProgress& progress = {});

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
