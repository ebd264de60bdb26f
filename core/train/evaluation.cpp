// SPDX-License-Identifier: GPL-3.0-or-later
#include "train/evaluation.h"

#include <algorithm>
#include <chrono>
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
    // A stop is heard before each pass of the model, within a batch too; so is the progress, as
    // the share of the batch's passes done (throttled: a small model makes thousands a second).
    const double passes = double(std::max<int64_t>(1, sampler.passesPerBatch()));
    int64_t done = 0, inBatch = 0, passesDone = 0;
    auto lastReport = std::chrono::steady_clock::now();
    const PassWatch watch([&] {
        if (stop && stop->stopRequested())
            throw EvaluationStopped();
        if (!progress || passesDone++ == 0)
            return;
        const auto now = std::chrono::steady_clock::now();
        if (now - lastReport < std::chrono::milliseconds(200))
            return;
        lastReport = now;
        progress(double(done) + double(inBatch) * std::min(1.0, double(passesDone - 1) / passes), count);
    });
    std::vector<torch::Tensor> parts;
    while (done < count) {
        if (stop && stop->stopRequested())
            throw EvaluationStopped();
        inBatch = std::min(batch, count - done);
        passesDone = 0;
        parts.push_back(sampler.sample(inBatch, generator, batch));
        done += inBatch;
        if (progress)
            progress(double(done), count);
    }
    if (parts.empty())
        return sampler.sample(0, generator, batch);
    torch::InferenceMode inference;
    return parts.size() == 1 ? parts.front() : torch::cat(parts, 0);
}

std::string FittedCount::describe() const
{
    return secondsPerSample > 0 ? describeFittedCount(samples, secondsPerSample) : std::to_string(samples) + " samples";
}

double timeRowPass(DenoiserModel& model, int64_t rows)
{
    rows = std::max<int64_t>(rows, 1);
    torch::InferenceMode inference;
    const auto device = model.parameters().front().device();
    const auto real = torch::dtype(model.parameters().front().scalar_type()).device(device);
    // Token 0 is a real id of every vocabulary; what a pass costs does not depend on the tokens.
    const auto tokens = torch::zeros({rows, model.length()}, torch::dtype(torch::kLong).device(device));
    const auto times = torch::full({rows}, 0.5, real);
    const auto pass = [&] { (void)model.forward(tokens, times).sum().item<double>(); }; // item(): waits for a GPU
    pass();
    const auto start = std::chrono::steady_clock::now();
    pass();
    return std::max(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1e-9) /
           double(rows);
}

FittedCount fitSampleCount(DenoiserModel& model, const Sampler& sampler, const SampleBudget& budget, int64_t rows)
{
    if (!budget.fitted())
        return {budget.most, 0};
    const double perSample = timeRowPass(model, std::clamp<int64_t>(rows, 1, std::max<int64_t>(1, budget.most))) *
                             double(std::max<int64_t>(1, sampler.passesPerBatch()));
    return {samplesWithin(perSample, budget.seconds, budget.most), perSample};
}

FittedCount fitEvaluationCount(Denoiser& model, const Task& task, const NoiseConfig& noise,
                               const SamplingConfig& sampling, const SampleBudget& budget)
{
    if (!budget.fitted())
        return {budget.most, 0};
    const auto sampler = makeSampler(model, noise, task.vocabSize(), sampling);
    return fitSampleCount(*model, *sampler, budget);
}

FittedCount fittedEvaluationCount(Denoiser& model, const Task& task, const NoiseConfig& noise, SamplingConfig& sampling,
                                  const SampleBudget& budget, TrainListener& listener)
{
    if (!budget.fitted())
        return {budget.most, 0};
    listener.onLog("timing one pass of the model to size the measurement");
    const FittedCount count = fitEvaluationCount(model, task, noise, sampling, budget);
    sampling.batch = int(std::min<int64_t>(sampling.batch, evaluationBatchFor(count.samples)));
    listener.onLog("measuring on " + count.describe());
    return count;
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
