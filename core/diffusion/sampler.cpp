// SPDX-License-Identifier: GPL-3.0-or-later
#include "diffusion/sampler.h"

#include <algorithm>

#include <torch/torch.h>

#include "diffusion/confidentsampler.h"
#include "diffusion/eulersampler.h"
#include "diffusion/exactsampler.h"
#include "diffusion/noiseprocess.h"
#include "diffusion/ratesampler.h"

namespace d2dpo {

bool exactExists(const NoiseConfig& noise) { return noise.process == "masking" && noise.eta == 0; }

namespace {

std::string confidentNeedsMasking()
{
    return "The confident sampler needs the masking process without remasking (eta 0); use exact or euler.";
}

int stepsFor(const NoiseConfig& noise, const SamplingConfig& sampling, int64_t length)
{
    return sampling.sampler == "exact" && !exactExists(noise) ? fineSteps(sampling, length) : sampling.steps;
}

} // namespace

namespace {
thread_local const std::function<void()>* t_passWatch = nullptr;
}

PassWatch::PassWatch(std::function<void()> beforePass) : m_beforePass(std::move(beforePass)), m_previous(t_passWatch)
{
    t_passWatch = &m_beforePass;
}

PassWatch::~PassWatch() { t_passWatch = m_previous; }

void samplerPass()
{
    if (t_passWatch)
        (*t_passWatch)();
}

torch::Tensor sampleInBatches(int64_t count, int64_t batch, int64_t length, torch::Device device,
                              const std::function<torch::Tensor(int64_t)>& sampleBatch)
{
    torch::InferenceMode inference;
    if (count <= 0)
        return torch::empty({0, length}, torch::dtype(torch::kLong).device(device));
    std::vector<torch::Tensor> parts;
    for (int64_t done = 0; done < count; done += batch)
        parts.push_back(sampleBatch(std::min(batch, count - done)));
    return torch::cat(parts, 0);
}

int fineSteps(const SamplingConfig& sampling, int64_t length)
{
    return int(std::max<int64_t>(sampling.steps, 8 * length));
}

std::unique_ptr<Sampler> makeSampler(Denoiser model, const NoiseConfig& noise, int64_t vocabSize,
                                     const SamplingConfig& sampling)
{
    const int64_t length = model->length();
    const int steps = stepsFor(noise, sampling, length);
    if (sampling.sampler == "confident") {
        if (!exactExists(noise))
            throw std::runtime_error(confidentNeedsMasking());
        return std::make_unique<ConfidentSampler>(std::move(model), vocabSize, sampling.steps);
    }
    if (noise.process == "masking") {
        if (sampling.sampler == "exact" && exactExists(noise))
            return std::make_unique<ExactMaskingSampler>(std::move(model), vocabSize);
        return std::make_unique<EulerSampler>(std::move(model), vocabSize, steps, noise.eta);
    }
    auto process = makeNoiseProcess(noise, vocabSize);
    if (!process)
        throw std::runtime_error(process.error());
    return std::make_unique<RateEulerSampler>(std::move(model),
                                              std::shared_ptr<const NoiseProcess>(std::move(process.value())), steps);
}

std::string describeSampling(const NoiseConfig& noise, const SamplingConfig& sampling, int64_t length)
{
    if (sampling.sampler == "exact" && exactExists(noise))
        return "exact sampler (one position per pass)";
    if (sampling.sampler == "confident")
        return "confident sampler, " + std::to_string(std::min<int64_t>(sampling.steps, length)) + " passes";
    const std::string euler = noise.process == "masking" ? "Euler" : "Euler on the rates";
    const int steps = stepsFor(noise, sampling, length);
    return euler + ", " + std::to_string(steps) + " steps" + (sampling.sampler == "exact" ? " (exact mode's fine step)" : "");
}

} // namespace d2dpo
