// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/referencemetrics.h"

#include <cstdio>

#include <torch/torch.h>

#include "diffusion/sampler.h"
#include "model/device.h"
#include "train/evaluation.h"

namespace d2dpo {

SampleMetrics referenceMetrics(PreferenceStore* store, const CheckpointInfo& reference, Denoiser frozen,
                               const Task& task, const MeasurementSpec& measurement, const torch::Tensor& example,
                               TrainListener& listener, const StopToken* stop)
{
    const std::string sampler = describeSampling(reference.spec.noise, measurement.sampling, task.length());
    const int64_t samples = measurement.samples;
    const uint64_t seed = measurement.seed;
    // Everything that changes the draws or what is measured: the sampler, eta, the batching (the
    // generator's draws go batch by batch), the device, and the rule whose share is measured.
    char eta[32];
    std::snprintf(eta, sizeof eta, "%.17g", reference.spec.noise.eta);
    const std::string key = sampler + "; eta " + eta + "; batch " + std::to_string(measurement.sampling.batch) + "; " +
                            frozen->parameters().front().device().str() + "; rule " +
                            (task.rule() ? task.rule()->spec() : std::string("none"));
    if (store) {
        auto known = store->evaluation(reference.id, key, samples, seed);
        if (known && known.value())
            if (auto parsed = sampleMetricsFromJson(*known.value())) {
                SampleMetrics metrics = parsed.value();
                const SampleMetrics described = task.measure(example.to(torch::kCPU));
                for (MetricValue& value : metrics.values)
                    for (const MetricValue& d : described.values)
                        if (d.name == value.name)
                            value.description = d.description;
                listener.onLog("the reference's metrics as measured before (" + metrics.provenance() + ")");
                return metrics;
            }
    }
    listener.onLog("measuring the reference on " + std::to_string(samples) + " samples");
    torch::NoGradGuard noGrad;
    auto generator = makeGenerator(seed, frozen->parameters().front().device());
    SampleMetrics metrics =
        evaluateModel(frozen, task, reference.spec.noise, measurement.sampling, samples, generator, stop,
                      [&listener](double drawn, int64_t total) { listener.onEvaluationProgress(drawn, total); });
    metrics.seed = seed; // the policy's evaluations draw with the same seed
    if (store)
        if (Status s = store->saveEvaluation(reference.id, key, samples, seed, metrics.toJson()); !s)
            listener.onLog("the reference's metrics were not recorded in the store: " + s.error());
    return metrics;
}

} // namespace d2dpo
