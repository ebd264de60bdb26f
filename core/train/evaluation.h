// SPDX-License-Identifier: GPL-3.0-or-later
// Evaluate a model the way the paper does: draw samples with the configured sampler and measure
// them with the task's declared metrics (VSR, the rule's share, diversity, the histogram).
#pragma once

#include <torch/types.h>

#include "base/config.h"
#include "model/denoiser.h"
#include "base/samplemetrics.h"
#include "tasks/task.h"

namespace d2dpo {

/// Draw `count` samples from `model` and measure them with the task.
SampleMetrics evaluateModel(Denoiser& model, const Task& task, const NoiseConfig& noise,
                            const SamplingConfig& sampling, int64_t count, torch::Generator& generator);

} // namespace d2dpo
