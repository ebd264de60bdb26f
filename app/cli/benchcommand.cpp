// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo bench`: D2-DPO steps/s, pretraining steps/s and sampling sequences/s at the small and
// large (and long) settings of research/benchmark.h, each the median over timed iterations after warm-up,
// printed with its configuration and the runtime (device, threads, BLAS).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <vector>

#include <sys/resource.h>

#include <nlohmann/json.hpp>

#include "cli/common.h"
#include "research/benchmark.h"
#include "facades/runtimeinfo.h"

namespace d2dpo::cli {

namespace {

struct BenchOptions {
    RuntimeOptions runtime;
    std::vector<std::string> settings = {"small", "large"};
    int samplingSteps = 64;
    double minSeconds = 3.0;
    int warmup = 1;
    bool json = false;
    bool samplingStudy = false;
    std::string checkpoint; ///< bench this model instead of the settings
    int batch = 64;
    int batchPiece = 0;
    int loraRank = 0;
    Precision precision = Precision::Float32;
};


int printSamplingStudy(const BenchOptions& o, const BenchRun& run, const std::string& runtime)
{
    std::printf("%s\n\nsampling 1000 sequences at N 16, d_model 64, 2 layers (untrained weights; cost does not depend "
                "on them)\n\n%-6s %-5s %5s | %14s %14s %8s | %12s %12s\n",
                runtime.c_str(), "time", "eta", "K", "cached seq/s", "reference seq/s", "speed-up",
                "cached f/seq", "ref f/seq");
    const Status done = runSamplingStudy(run, [](const SamplingStudyRow& r) {
        if (!r.reused)
            std::printf("%-6s %-5g %5s | %s\n", "yes", r.eta, "any", "same algorithm in both modes (no reuse)");
        else
            std::printf("%-6s %-5g %5d | %14.1f %14.1f %7.1fx | %12.1f %12.1f\n", r.timeConditioned ? "yes" : "no",
                        r.eta, r.steps, r.cachedRate, r.referenceRate, r.cachedRate / r.referenceRate, r.cachedPasses,
                        r.referencePasses);
        std::fflush(stdout);
    });
    if (!done)
        return fail("bench", done.error());
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

int printModelFile(const BenchOptions& o, const BenchRun& run, const std::string& runtime)
{
    const auto measured = measureModelFile(o.checkpoint, o.batch, run);
    if (!measured)
        return fail("bench", measured.error());
    const BenchFigures& f = measured.value();
    if (o.json) {
        std::cout << nlohmann::json{{"runtime", runtime},
                                    {"results", {{{"setting", "checkpoint"}, {"checkpoint", o.checkpoint},
                                                  {"batch", o.batch}, {"batch_piece", o.batchPiece}, {"lora_rank", o.loraRank},
                                                  {"precision", precisionName(o.precision)},
                                                  {"log_probability_gap", std::isnan(f.logProbabilityGap)
                                                                              ? nlohmann::json()
                                                                              : nlohmann::json(f.logProbabilityGap)},
                                                  {"sampling_steps", o.samplingSteps},
                                                  {"parameters", f.parameters},
                                                  {"dpo_steps_per_second", f.dpoStepsPerSecond},
                                                  {"pretrain_steps_per_second", f.pretrainStepsPerSecond},
                                                  {"sampling_sequences_per_second", f.samplesPerSecond},
                                                  {"peak_resident_mib", peakResidentMiB()},
                                                  {"estimated_dpo_peak_mib",
                                                   double(f.estimatedDpoPeakBytes) / double(1 << 20)}}}}}
                         .dump(2)
                  << "\n";
        return 0;
    }
    char pretraining[64] = "n/a (the task has no training sequences)";
    if (!std::isnan(f.pretrainStepsPerSecond))
        std::snprintf(pretraining, sizeof pretraining, "%.3f steps/s", f.pretrainStepsPerSecond);
    std::printf("%s\n\n%s: %lld parameters, batch %d%s\nD2-DPO %.3f steps/s, pretraining %s, sampling %.1f "
                "sequences/s (%d Euler steps), peak %.0f MiB (the D2-DPO step's estimate: %.0f MiB)\n",
                runtime.c_str(), o.checkpoint.c_str(), static_cast<long long>(f.parameters), o.batch,
                o.batchPiece > 0 ? (" in pieces of " + std::to_string(o.batchPiece)).c_str() : "",
                f.dpoStepsPerSecond, pretraining, f.samplesPerSecond, o.samplingSteps, peakResidentMiB(),
                double(f.estimatedDpoPeakBytes) / double(1 << 20));
    if (!std::isnan(f.logProbabilityGap))
        std::printf("D2-DPO's matrix products at %s; the model's log-probabilities at masked positions differ from "
                    "float32's by at most %.2e\n",
                    std::string(precisionName(o.precision)).c_str(), f.logProbabilityGap);
    return 0;
}

int run(const BenchOptions& o)
{
    auto runtimeLine = d2dpo::setUpRuntime(o.runtime.threads, o.runtime.device);
    if (!runtimeLine)
        return fail("bench", runtimeLine.error());
    std::cerr << "d2dpo: " << runtimeLine.value() << "\n";
    const std::string& runtime = runtimeLine.value();
    if (o.samplingSteps < 1 || !(o.minSeconds >= 0) || o.warmup < 0)
        return fail("bench", "--sampling-steps must be >= 1, --min-seconds >= 0, --warmup >= 0");
    const BenchRun run{o.runtime.seed, o.runtime.device, o.samplingSteps, o.minSeconds, o.warmup, o.batchPiece,
                       o.loraRank, o.precision};
    if (o.samplingStudy)
        return printSamplingStudy(o, run, runtime);
    if (!o.checkpoint.empty())
        return printModelFile(o, run, runtime);
    nlohmann::json results = nlohmann::json::array();
    if (!o.json)
        std::printf("%s\n\n%-6s %7s %6s %5s %5s %6s %10s | %12s %12s %14s %9s\n", runtime.c_str(),
                    "name", "d_model", "layers", "heads", "N", "batch", "params", "D2-DPO st/s", "pretrain st/s",
                    "sampling seq/s", "peak MiB");
    for (const std::string& name : o.settings) {
        const auto& settings = benchSettings();
        const auto it =
            std::find_if(settings.begin(), settings.end(), [&](const BenchSetting& s) { return s.name == name; });
        if (it == settings.end())
            return fail("bench", "unknown setting '" + name + "' (small, large, long)");
        const auto measured = measureSetting(*it, run);
        if (!measured)
            return fail("bench", measured.error());
        const BenchFigures& f = measured.value();
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
        std::cout << nlohmann::json{{"runtime", runtime}, {"results", results}}.dump(2)
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
    c->add_option("--sampling-steps", options->samplingSteps, "Euler steps per sample")->check(atLeast(1))->capture_default_str();
    c->add_option("--min-seconds", options->minSeconds, "Time spent on each figure")->check(finitePositive())->capture_default_str();
    c->add_option("--warmup", options->warmup, "Untimed calls before timing")->check(atLeast(0))->capture_default_str();
    c->add_flag("--json", options->json, "Print JSON");
    c->add_option("--checkpoint,-c", options->checkpoint,
                  "Bench this checkpoint's model (any kind: an imported TorchScript model too) instead of the settings");
    c->add_option("--batch", options->batch, "With --checkpoint: pairs per D2-DPO step and sequences per sampling call")
        ->check(atLeast(1))
        ->capture_default_str();
    c->add_option("--batch-piece", options->batchPiece,
                  "With --checkpoint: D2-DPO steps run their batch in pieces of this many pairs (0 = at once)")
        ->check(atLeast(0))
        ->capture_default_str();
    c->add_option("--lora-rank", options->loraRank,
                  "With --checkpoint of a model brought in: D2-DPO trains low-rank adapters of this rank (0 = every weight)")
        ->check(atLeast(0))
        ->capture_default_str();
    addPrecisionOption(c, options->precision, "The format of the D2-DPO step's matrix products");
    c->add_flag("--sampling-study", options->samplingStudy,
                "Compare the cached and the reference sampler at 64, 256 and 1000 Euler steps");
    c->callback([options, &exitCode] { exitCode = run(*options); });
}

} // namespace d2dpo::cli
