// SPDX-License-Identifier: GPL-3.0-or-later
#include "train/evaluation.h"

#include <algorithm>
#include <vector>

#include <torch/torch.h>

#include "diffusion/sampler.h"
#include "model/torchscriptdenoiser.h"

namespace d2dpo {

torch::Tensor drawSamples(Sampler& sampler, int64_t count, int64_t batch, torch::Generator& generator,
                          const StopToken* stop, const SamplingProgress& progress)
{
    // Each call draws whole batches from the one generator, as a single call would: the samples
    // are those of sampler.sample(count, generator, batch).
    batch = std::max<int64_t>(batch, 1);
    // A stop is heard before each pass of the model, within a batch too.
    const PassWatch watch([stop] {
        if (stop && stop->stopRequested())
            throw EvaluationStopped();
    });
    std::vector<torch::Tensor> parts;
    for (int64_t done = 0; done < count;) {
        if (stop && stop->stopRequested())
            throw EvaluationStopped();
        const int64_t n = std::min(batch, count - done);
        parts.push_back(sampler.sample(n, generator, batch));
        done += n;
        if (progress)
            progress(done, count);
    }
    if (parts.empty())
        return sampler.sample(0, generator, batch);
    torch::InferenceMode inference;
    return parts.size() == 1 ? parts.front() : torch::cat(parts, 0);
}

void startCountingNonFinitePasses(DenoiserModel& model) { takeNonFiniteForwards(model); }

void reportNonFinitePasses(DenoiserModel& model, SampleMetrics& metrics)
{
    if (const int64_t bad = takeNonFiniteForwards(model); bad > 0)
        metrics.set("non_finite_passes", double(bad),
                    "passes of the model whose logits held NaN or infinities: what they drew is not the model's");
}

SampleMetrics evaluateModel(Denoiser& model, const Task& task, const NoiseConfig& noise,
                            const SamplingConfig& sampling, int64_t count, torch::Generator& generator,
                            const StopToken* stop, const SamplingProgress& progress)
{
    auto sampler = makeSampler(model, noise, task.vocabSize(), sampling);
    startCountingNonFinitePasses(*model);
    SampleMetrics metrics = task.measure(drawSamples(*sampler, count, sampling.batch, generator, stop, progress));
    metrics.sampler = describeSampling(noise, sampling, task.length());
    reportNonFinitePasses(*model, metrics);
    return metrics;
}

} // namespace d2dpo
