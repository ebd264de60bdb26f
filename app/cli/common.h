// SPDX-License-Identifier: GPL-3.0-or-later
// What every `d2dpo` subcommand shares: --seed/--device/--threads, the model, pretraining,
// D2-DPO and sampling options (with the paper experiment's defaults), and error reporting.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "base/config.h"
#include "base/result.h"
#include "base/samplemetrics.h"

namespace d2dpo::cli {

struct RuntimeOptions {
    uint64_t seed = 0;
    std::string device = "auto";
    int threads = 0;
};

/// Adds --seed, --device, --threads.
void addRuntimeOptions(CLI::App* command, RuntimeOptions& options);
void addModelOptions(CLI::App* command, ModelSpec& spec);
void addPretrainOptions(CLI::App* command, PretrainConfig& config);
void addDpoOptions(CLI::App* command, DpoConfig& config);
void addSamplingOptions(CLI::App* command, SamplingConfig& config);

/// Applies --threads and resolves --device; prints the runtime line to stderr.
Status setUpRuntime(const RuntimeOptions& options);

/// Prints "d2dpo <command>: error: message" to stderr and returns the exit code 1.
int fail(const std::string& command, const std::string& message);

/// Subcommand registration: each adds itself to `app` and, when chosen, stores its exit code.
using Register = void (*)(CLI::App& app, int& exitCode);
void registerPretrain(CLI::App& app, int& exitCode);
void registerSample(CLI::App& app, int& exitCode);
void registerEval(CLI::App& app, int& exitCode);
void registerTrain(CLI::App& app, int& exitCode);
void registerExport(CLI::App& app, int& exitCode);
void registerReproduce(CLI::App& app, int& exitCode);
void registerBench(CLI::App& app, int& exitCode);
void registerStoreCommands(CLI::App& app, int& exitCode);

/// One line with the headline metrics.
std::string formatMetrics(const SampleMetrics& metrics);

} // namespace d2dpo::cli
