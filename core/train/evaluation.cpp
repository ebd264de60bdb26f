// SPDX-License-Identifier: GPL-3.0-or-later
#include "train/evaluation.h"

#include <torch/torch.h>

#include "diffusion/sampler.h"

namespace d2dpo {

SampleMetrics evaluateModel(Denoiser& model, const Task& task, const NoiseConfig& noise,
                            const SamplingConfig& sampling, int64_t count, torch::Generator& generator)
{
    SampleMetrics metrics =
        task.measure(makeSampler(model, noise, task.vocabSize(), sampling)->sample(count, generator, sampling.batch));
    metrics.sampler = describeSampling(noise, sampling, task.length());
    return metrics;
}

} // namespace d2dpo
