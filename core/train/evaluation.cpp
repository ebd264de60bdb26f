// SPDX-License-Identifier: GPL-3.0-or-later
#include "train/evaluation.h"

#include <torch/torch.h>

#include "diffusion/eulersampler.h"

namespace d2dpo {

std::vector<int64_t> decodeToHost(const Task& task, const torch::Tensor& samples)
{
    const auto decoded = task.decode(samples).to(torch::kCPU).contiguous();
    return {decoded.data_ptr<int64_t>(), decoded.data_ptr<int64_t>() + decoded.numel()};
}

SampleMetrics measureSamples(const Task& task, const torch::Tensor& samples)
{
    return computeSampleMetrics(decodeToHost(task, samples), task.maxValue());
}

SampleMetrics evaluateModel(Denoiser& model, const Task& task, const NoiseConfig& noise,
                            const SamplingConfig& sampling, int64_t count, torch::Generator& generator)
{
    EulerSampler sampler(model, task.maskToken(), sampling.steps, noise.eta);
    return measureSamples(task, sampler.sample(count, generator, sampling.batch));
}

} // namespace d2dpo
