// `d2dpo bench`: D2-DPO steps/s, pretraining steps/s and sampling sequences/s at the small and
// large settings of DESIGN.md section 8, each the median over timed iterations after warm-up,
// printed with its configuration and the runtime (device, threads, BLAS).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <vector>

#include <sys/resource.h>

#include <torch/cuda.h>
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "common.h"
#include "device.h"
#include "dpotrainer.h"
#include "eulersampler.h"
#include "noiseprocess.h"
#include "pretrainer.h"
#include "task.h"

namespace d2dpo::cli {

namespace {

struct Setting {
    std::string name;
    int dModel;
    int layers;
    int heads;
    int length;
    int batch;
};

const std::vector<Setting> kSettings = {
    {"small", 64, 2, 4, 16, 64},
    {"large", 256, 4, 8, 64, 256},
    {"long", 64, 2, 4, 256, 64}, // the small width at N = 256: how cost grows with length
};

struct BenchOptions {
    RuntimeOptions runtime;
    std::vector<std::string> settings = {"small", "large"};
    int samplingSteps = 64;
    double minSeconds = 3.0;
    int warmup = 1;
    bool json = false;
    bool samplingStudy = false;
};

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

struct Figures {
    double dpoStepsPerSecond = 0;
    double pretrainStepsPerSecond = 0;
    double samplesPerSecond = 0;
    int64_t parameters = 0;
};

Figures measure(const Setting& s, const BenchOptions& o, torch::Device device)
{
    ModelSpec spec;
    spec.task.length = s.length;
    spec.model.dModel = s.dModel;
    spec.model.layers = s.layers;
    spec.model.heads = s.heads;
    auto task = std::move(makeTask(spec.task).value());
    auto noise = std::move(makeNoiseProcess(spec.noise, task->vocabSize()).value());
    torch::manual_seed(o.runtime.seed);
    Figures f;

    {
        Denoiser model = makeDenoiser(spec, task->vocabSize(), device);
        f.parameters = parameterCount(model);
        PretrainConfig config;
        config.batch = s.batch;
        Pretrainer trainer(model, *task, *noise, config, o.runtime.seed);
        f.pretrainStepsPerSecond = 1.0 / medianSeconds([&] { trainer.trainStep(); }, o.warmup, o.minSeconds, device);
    }
    {
        Denoiser model = makeDenoiser(spec, task->vocabSize(), device);
        DpoConfig config;
        config.batch = s.batch;
        DpoTrainer trainer(model, *task, *noise, spec, config, SamplingConfig{}, o.runtime.seed);
        auto generator = makeGenerator(o.runtime.seed, device);
        const auto [winners, losers] = task->rulePairs(4096, generator, device);
        trainer.setPreferences(winners, losers);
        f.dpoStepsPerSecond = 1.0 / medianSeconds([&] { trainer.trainStep(false); }, o.warmup, o.minSeconds, device);
    }
    {
        Denoiser model = makeDenoiser(spec, task->vocabSize(), device);
        EulerSampler sampler(model, task->maskToken(), o.samplingSteps, spec.noise.eta);
        auto generator = makeGenerator(o.runtime.seed, device);
        f.samplesPerSecond =
            s.batch / medianSeconds([&] { sampler.sample(s.batch, generator, s.batch); }, 1, o.minSeconds, device);
    }
    return f;
}

/// Sequences/s and forward passes per sequence of the cached and the reference sampler, at the
/// small width, for 64, 256 and 1000 Euler steps.
int runSamplingStudy(const BenchOptions& o, torch::Device device)
{
    std::printf("%s\n\nsampling 1000 sequences at N 16, d_model 64, 2 layers (untrained weights; cost does not depend "
                "on them)\n\n%-6s %-5s %5s | %14s %14s %8s | %12s %12s\n",
                describeRuntime(device).c_str(), "time", "eta", "K", "cached seq/s", "reference seq/s", "speed-up",
                "cached f/seq", "ref f/seq");
    for (const bool time : {false, true}) {
        for (const double eta : {0.0, 0.5}) {
            if (time && eta > 0) {
                // Nothing can be reused when the output depends on t and rows may re-mask: both
                // modes run the same per-step algorithm.
                std::printf("%-6s %-5g %5s | %s\n", "yes", eta, "any", "same algorithm in both modes (no reuse)");
                continue;
            }
            for (const int steps : {64, 256, 1000}) {
                ModelSpec spec;
                spec.model.timeConditioning = time;
                torch::manual_seed(o.runtime.seed);
                Denoiser model = makeDenoiser(spec, 2, device);
                double rates[2];
                double passes[2];
                int index = 0;
                for (const auto mode : {EulerSampler::Mode::Cached, EulerSampler::Mode::Reference}) {
                    const int64_t count = 1000;
                    EulerSampler sampler(model, 2, steps, eta, mode);
                    auto generator = makeGenerator(o.runtime.seed, device);
                    rates[index] = count / medianSeconds([&] { sampler.sample(count, generator, count); }, 0,
                                                         o.minSeconds, device);
                    EulerSampler counting(model, 2, steps, eta, mode); // one call, counted alone
                    auto countingGenerator = makeGenerator(o.runtime.seed, device);
                    counting.sample(count, countingGenerator, count);
                    passes[index] = double(counting.counters().rowsForwarded) / double(count);
                    ++index;
                }
                std::printf("%-6s %-5g %5d | %14.1f %14.1f %7.1fx | %12.1f %12.1f\n", time ? "yes" : "no", eta, steps,
                            rates[0], rates[1], rates[0] / rates[1], passes[0], passes[1]);
                std::fflush(stdout);
            }
        }
    }
    std::printf("\nf/seq: denoiser passes per sequence. Same seed, same samples in both modes (tested).\n");
    return 0;
}

/// The process's peak resident memory so far, in MiB (settings run in order, so after each
/// one this is the peak of everything run up to it).
double peakResidentMiB()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_maxrss) / 1024.0; // Linux reports KiB
}

int run(const BenchOptions& o)
{
    auto device = setUpRuntime(o.runtime);
    if (!device)
        return fail("bench", device.error());
    if (o.samplingSteps < 1 || !(o.minSeconds >= 0) || o.warmup < 0)
        return fail("bench", "--sampling-steps must be >= 1, --min-seconds >= 0, --warmup >= 0");
    if (o.samplingStudy)
        return runSamplingStudy(o, device.value());
    nlohmann::json results = nlohmann::json::array();
    if (!o.json)
        std::printf("%s\n\n%-6s %7s %6s %5s %5s %6s %10s | %12s %12s %14s %9s\n", describeRuntime(device.value()).c_str(),
                    "name", "d_model", "layers", "heads", "N", "batch", "params", "D2-DPO st/s", "pretrain st/s",
                    "sampling seq/s", "peak MiB");
    for (const std::string& name : o.settings) {
        const auto it = std::find_if(kSettings.begin(), kSettings.end(), [&](const Setting& s) { return s.name == name; });
        if (it == kSettings.end())
            return fail("bench", "unknown setting '" + name + "' (small, large, long)");
        const Figures f = measure(*it, o, device.value());
        if (o.json) {
            results.push_back({{"setting", it->name}, {"d_model", it->dModel}, {"layers", it->layers},
                               {"heads", it->heads}, {"length", it->length}, {"batch", it->batch},
                               {"sampling_steps", o.samplingSteps}, {"parameters", f.parameters},
                               {"dpo_steps_per_second", f.dpoStepsPerSecond},
                               {"pretrain_steps_per_second", f.pretrainStepsPerSecond},
                               {"sampling_sequences_per_second", f.samplesPerSecond},
                               {"peak_resident_mib", peakResidentMiB()}});
        } else {
            std::printf("%-6s %7d %6d %5d %5d %6d %10lld | %12.3f %12.3f %14.1f %9.0f\n", it->name.c_str(), it->dModel,
                        it->layers, it->heads, it->length, it->batch, static_cast<long long>(f.parameters),
                        f.dpoStepsPerSecond, f.pretrainStepsPerSecond, f.samplesPerSecond, peakResidentMiB());
            std::fflush(stdout);
        }
    }
    if (o.json)
        std::cout << nlohmann::json{{"runtime", describeRuntime(device.value())}, {"results", results}}.dump(2)
                  << "\n";
    else
        std::printf("\nmedians after %d warm-up call(s), >= %.1f s per figure; sampling: %d Euler steps, one batch; "
                    "peak MiB: the process's peak resident memory after the setting (settings run in order)\n",
                    o.warmup, o.minSeconds, o.samplingSteps);
    return 0;
}

} // namespace

void registerBench(CLI::App& app, int& exitCode)
{
    auto options = std::make_shared<BenchOptions>();
    CLI::App* c = app.add_subcommand("bench", "Measure D2-DPO, pretraining and sampling throughput");
    addRuntimeOptions(c, options->runtime);
    c->add_option("--settings", options->settings, "Settings to run: small, large, long")
        ->delimiter(',')
        ->capture_default_str();
    c->add_option("--sampling-steps", options->samplingSteps, "Euler steps per sample")->capture_default_str();
    c->add_option("--min-seconds", options->minSeconds, "Time spent on each figure")->capture_default_str();
    c->add_option("--warmup", options->warmup, "Untimed calls before timing")->capture_default_str();
    c->add_flag("--json", options->json, "Print JSON");
    c->add_flag("--sampling-study", options->samplingStudy,
                "Compare the cached and the reference sampler at 64, 256 and 1000 Euler steps");
    c->callback([options, &exitCode] { exitCode = run(*options); });
}

} // namespace d2dpo::cli
