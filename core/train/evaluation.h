// SPDX-License-Identifier: GPL-3.0-or-later
// Evaluate a model the way the paper does: draw samples with the Euler sampler and measure
// them with the task (VSR, odd ratio, histogram, diversity).
#pragma once

#include <torch/types.h>

#include "base/config.h"
#include "model/denoiser.h"
#include "base/samplemetrics.h"
#include "tasks/task.h"

namespace d2dpo {

/// Decoded values of samples [B, D] -> host vector (one copy to the host).
std::vector<int64_t> decodeToHost(const Task& task, const torch::Tensor& samples);

SampleMetrics measureSamples(const Task& task, const torch::Tensor& samples);

/// Draw `count` samples from `model` and measure them.
SampleMetrics evaluateModel(Denoiser& model, const Task& task, const NoiseConfig& noise,
                            const SamplingConfig& sampling, int64_t count, torch::Generator& generator);

} // namespace d2dpo
