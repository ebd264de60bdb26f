// SPDX-License-Identifier: GPL-3.0-or-later
#include "research/benchmark.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <tuple>

#include <torch/cuda.h>
#include <torch/torch.h>

#include "base/failurereport.h"
#include "base/memoryestimate.h"
#include "diffusion/eulersampler.h"
#include "diffusion/noiseprocess.h"
#include "model/device.h"
#include "tasks/task.h"
#include "train/dpotrainer.h"
#include "train/pretrainer.h"
#include "io/checkpoint.h"
#include "kernels/matmulprecision.h"
#include "model/transformerdenoiser.h"

namespace d2dpo {

namespace {

/// Median seconds of one call after `warmup` calls: timed calls continue until `minSeconds` have
/// passed and at least 3 calls ran, except that one call longer than `minSeconds` is enough
/// (such a call is long enough to be stable, and the large setting would otherwise take minutes).
double medianSeconds(const std::function<void()>& call, int warmup, double minSeconds, torch::Device device)
{
    auto sync = [&] {
        if (device.is_cuda())
            torch::cuda::synchronize();
    };
    for (int i = 0; i < warmup; ++i)
        call();
    sync();
    std::vector<double> times;
    const auto start = std::chrono::steady_clock::now();
    while (times.empty() || (times.size() < 3 && times.front() < minSeconds) ||
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < minSeconds) {
        const auto t0 = std::chrono::steady_clock::now();
        call();
        sync();
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::nth_element(times.begin(), times.begin() + long(times.size() / 2), times.end());
    return times[times.size() / 2];
}

/// What a precision costs the model: the largest gap between its log-probabilities at the masked
/// positions of `sequences` (half of each masked, t = 0.5) computed at `run.precision` and at
/// float32, the quantities the D2-DPO loss is made of.
double logProbabilityGap(const Denoiser& model, const torch::Tensor& sequences, int64_t maskToken, const BenchRun& run)
{
    torch::NoGradGuard noGrad;
    model->eval();
    auto generator = makeGenerator(run.seed + 2, sequences.device());
    const auto masked = torch::rand(sequences.sizes(), generator, torch::dtype(torch::kFloat).device(sequences.device()))
                            .lt(0.5);
    const auto tokens = sequences.masked_fill(masked, maskToken);
    const auto t = torch::full({sequences.size(0)}, 0.5, torch::dtype(torch::kFloat).device(sequences.device()));
    const auto at = [&](Precision precision) {
        const MatmulPrecisionScope scope(precision);
        return torch::log_softmax(model->forward(tokens, t), -1).index({masked});
    };
    return (at(run.precision) - at(Precision::Float32)).abs().max().item<double>();
}

/// A checkpoint's model (any kind, a TorchScript one included) at `batch` pairs a D2-DPO step
/// and `batch` sequences a sampling call; pretraining steps continue from its weights.
BenchFigures measureModelOn(const LoadedCheckpoint& loaded, int batch, const BenchRun& o, torch::Device device)
{
    const ModelSpec& spec = loaded.info.spec;
    auto task = makeTask(spec.task).value();
    auto noise = makeNoiseProcess(spec.noise, task->vocabSize()).value();
    torch::manual_seed(o.seed);
    BenchFigures f;
    Denoiser model = loaded.model;
    model->to(device);
    f.parameters = parameterCount(model);
    // A task without training sequences (a model imported without data) has nothing to pretrain
    // on (its figure is NaN) and no rule-made pairs: D2-DPO trains on random sequences of its
    // symbols. A step's cost does not depend on what the sequences say, and drawing real samples
    // first would take minutes at the sizes people bring.
    const bool hasData = spec.task.name != "sequences" || !spec.task.data.empty();
    f.pretrainStepsPerSecond = std::numeric_limits<double>::quiet_NaN();
    if (hasData) {
        Denoiser copy = model->deepCopy();
        PretrainConfig config;
        config.batch = batch;
        Pretrainer trainer(copy, *task, *noise, config, o.seed);
        f.pretrainStepsPerSecond = 1.0 / medianSeconds([&] { trainer.trainStep(); }, o.warmup, o.minSeconds, device);
    }
    {
        DpoConfig config;
        config.batch = batch;
        config.batchPiece = o.batchPiece;
        config.loraRank = o.loraRank;
        config.precision = o.precision;
        SamplingConfig sampling; // the benchmark samples `batch` at a time
        sampling.batch = batch;
        f.estimatedDpoPeakBytes = estimateDpoPeakBytes(spec, config, sampling);
        DpoTrainer trainer(model->deepCopy(), *task, *noise, DpoTrainerOptions(spec, config).seed(o.seed));
        auto generator = makeGenerator(o.seed, device);
        torch::Tensor winners, losers;
        if (hasData) {
            std::tie(winners, losers) = task->rulePairs(4096, generator, device).value();
        } else {
            const auto tokens = torch::randint(0, task->vocabSize() - 1, {2 * int64_t(batch), task->length()},
                                               generator, torch::dtype(torch::kLong).device(device));
            const auto drawn = tokens + tokens.ge(task->maskToken()).to(torch::kLong); // never the mask
            winners = drawn.slice(0, 0, batch);
            losers = drawn.slice(0, batch, 2 * int64_t(batch));
        }
        trainer.setPreferences(winners, losers);
        f.dpoStepsPerSecond = 1.0 / medianSeconds([&] { trainer.trainStep(false); }, o.warmup, o.minSeconds, device);
        if (o.precision != Precision::Float32)
            f.logProbabilityGap = logProbabilityGap(model, winners, task->maskToken(), o);
    }
    {
        model->eval();
        EulerSampler sampler(model, task->maskToken(), o.samplingSteps, spec.noise.eta);
        auto generator = makeGenerator(o.seed, device);
        f.samplesPerSecond =
            batch / medianSeconds([&] { sampler.sample(batch, generator, batch); }, 1, o.minSeconds, device);
    }
    return f;
}

BenchFigures measureOn(const BenchSetting& s, const BenchRun& o, torch::Device device)
{
    ModelSpec spec;
    spec.task.length = s.length;
    spec.model.dModel = s.dModel;
    spec.model.layers = s.layers;
    spec.model.heads = s.heads;
    auto task = makeTask(spec.task).value();
    auto noise = makeNoiseProcess(spec.noise, task->vocabSize()).value();
    torch::manual_seed(o.seed);
    BenchFigures f;

    {
        Denoiser model = makeDenoiser(spec, task->vocabSize(), device);
        f.parameters = parameterCount(model);
        PretrainConfig config;
        config.batch = s.batch;
        Pretrainer trainer(model, *task, *noise, config, o.seed);
        f.pretrainStepsPerSecond = 1.0 / medianSeconds([&] { trainer.trainStep(); }, o.warmup, o.minSeconds, device);
    }
    {
        Denoiser model = makeDenoiser(spec, task->vocabSize(), device);
        DpoConfig config;
        config.batch = s.batch;
        config.precision = o.precision;
        DpoTrainer trainer(model, *task, *noise, DpoTrainerOptions(spec, config).seed(o.seed));
        auto generator = makeGenerator(o.seed, device);
        const auto [winners, losers] = task->rulePairs(4096, generator, device).value();
        trainer.setPreferences(winners, losers);
        f.dpoStepsPerSecond = 1.0 / medianSeconds([&] { trainer.trainStep(false); }, o.warmup, o.minSeconds, device);
    }
    {
        Denoiser model = makeDenoiser(spec, task->vocabSize(), device);
        EulerSampler sampler(model, task->maskToken(), o.samplingSteps, spec.noise.eta);
        auto generator = makeGenerator(o.seed, device);
        f.samplesPerSecond =
            s.batch / medianSeconds([&] { sampler.sample(s.batch, generator, s.batch); }, 1, o.minSeconds, device);
    }
    return f;
}

} // namespace

const std::vector<BenchSetting>& benchSettings()
{
    static const std::vector<BenchSetting> settings = {
        {"small", 64, 2, 4, 16, 64},
        {"large", 256, 4, 8, 64, 256},
        {"long", 64, 2, 4, 256, 64}, // the small width at N = 256: how cost grows with length
    };
    return settings;
}

Result<BenchFigures> measureSetting(const BenchSetting& setting, const BenchRun& run)
{
    auto device = resolveDevice(run.device);
    if (!device)
        return makeError(device.error());
    try {
        return measureOn(setting, run, device.value());
    } catch (const std::exception& e) {
        return makeError("benchmark '" + setting.name + "' failed: " + userMessage(e));
    }
}

Result<BenchFigures> measureModelFile(const std::string& checkpointPath, int batch, const BenchRun& run)
{
    auto device = resolveDevice(run.device);
    if (!device)
        return makeError(device.error());
    auto loaded = loadCheckpoint(checkpointPath, torch::kCPU);
    if (!loaded)
        return makeError(loaded.error());
    try {
        return measureModelOn(loaded.value(), batch, run, device.value());
    } catch (const std::exception& e) {
        return makeError("benchmark of '" + checkpointPath + "' failed: " + userMessage(e));
    }
}

Status runSamplingStudy(const BenchRun& o, const std::function<void(const SamplingStudyRow&)>& report)
{
    auto resolved = resolveDevice(o.device);
    if (!resolved)
        return makeError(resolved.error());
    const torch::Device device = resolved.value();
    for (const bool time : {false, true}) {
        for (const double eta : {0.0, 0.5}) {
            if (time && eta > 0) {
                // Nothing can be reused when the output depends on t and rows may re-mask: both
                // modes run the same per-step algorithm.
                report({time, eta, 0, false});
                continue;
            }
            for (const int steps : {64, 256, 1000}) {
                ModelSpec spec;
                spec.model.timeConditioning = time;
                torch::manual_seed(o.seed);
                Denoiser model = makeDenoiser(spec, 2, device);
                double rates[2];
                double passes[2];
                int index = 0;
                for (const auto mode : {EulerSampler::Mode::Cached, EulerSampler::Mode::Reference}) {
                    const int64_t count = 1000;
                    EulerSampler sampler(model, 2, steps, eta, mode);
                    auto generator = makeGenerator(o.seed, device);
                    rates[index] = count / medianSeconds([&] { sampler.sample(count, generator, count); }, 0,
                                                         o.minSeconds, device);
                    EulerSampler counting(model, 2, steps, eta, mode); // one call, counted alone
                    auto countingGenerator = makeGenerator(o.seed, device);
                    counting.sample(count, countingGenerator, count);
                    passes[index] = double(counting.counters().rowsForwarded) / double(count);
                    ++index;
                }
                report({time, eta, steps, true, rates[0], rates[1], passes[0], passes[1]});
            }
        }
    }
    return Ok{};
}

} // namespace d2dpo
