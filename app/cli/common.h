// SPDX-License-Identifier: GPL-3.0-or-later
// What every `d2dpo` subcommand shares: --seed/--device/--threads, the model, pretraining,
// D2-DPO and sampling options (with the paper experiment's defaults), and error reporting.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "base/config.h"
#include "base/datafile.h"
#include "base/result.h"
#include "base/samplemetrics.h"

namespace d2dpo {
struct AssayPairsSpec;
}

namespace d2dpo::cli {

struct RuntimeOptions {
    uint64_t seed = 0;
    std::string device = "auto";
    int threads = 0;
};

/// Where a new model's task comes from: the paper's binary integers of --length, or --data FILE.
struct TaskOptions {
    int length = 16;
    std::string data;
    SequenceFileOptions file;
};

/// Option checks: a finite number > 0 (beta, learning rates); a seed in 0..2^63-1.
const CLI::Validator& finitePositive();
const CLI::Validator& seedRange();
/// A whole number >= `minimum` (counts: >= 1; "every k steps, 0 = never": >= 0).
CLI::Validator atLeast(int64_t minimum);
/// A preference store's path: never empty (an empty --db would open a throw-away store and lose
/// what the command writes there).
const CLI::Validator& storePath();
/// Every floating-point option of `app` and its commands, found by type, refuses NaN and
/// infinities (called once, after every command is registered).
void refuseNonFiniteNumbers(CLI::App& app);

/// Adds --seed, --device, --threads.
void addRuntimeOptions(CLI::App* command, RuntimeOptions& options);
/// Adds --length, --data, --vocabulary, --max-length, --crop, --valid and --rule (with the given
/// help text; the rule of a task made here).
void addTaskOptions(CLI::App* command, TaskOptions& options, const std::string& ruleHelp);
/// The task the options describe; a data file's summary goes to stderr.
Result<TaskConfig> makeTaskConfig(const TaskOptions& options);
/// Adds --rule: another rule than the checkpoint's task's own.
void addRuleOption(CLI::App* command, std::string& rule, const std::string& help);
/// The model's shape and noise (not its task).
void addModelOptions(CLI::App* command, ModelSpec& spec);
void addPretrainOptions(CLI::App* command, PretrainConfig& config);
void addDpoOptions(CLI::App* command, DpoConfig& config, DpoScheduleConfig& schedule);
/// --precision, its values from base/precision.h's table.
void addPrecisionOption(CLI::App* command, Precision& precision, const std::string& help);
void addSamplingOptions(CLI::App* command, SamplingConfig& config);

/// Applies --threads and resolves --device; prints the runtime line to stderr.
Status setUpRuntime(const RuntimeOptions& options);

/// Prints "d2dpo <command>: error: message" to stderr and returns the exit code 1.
int fail(const std::string& command, const std::string& message);

/// Subcommand registration: each adds itself to `app` and, when chosen, stores its exit code.
using Register = void (*)(CLI::App& app, int& exitCode);
void registerPretrain(CLI::App& app, int& exitCode);
void registerImport(CLI::App& app, int& exitCode);
void registerSample(CLI::App& app, int& exitCode);
void registerEval(CLI::App& app, int& exitCode);
void registerTrain(CLI::App& app, int& exitCode);
void registerExport(CLI::App& app, int& exitCode);
void registerReproduce(CLI::App& app, int& exitCode);
void registerBench(CLI::App& app, int& exitCode);
void registerPairsCommand(CLI::App& app, int& exitCode);
void registerStoreCommands(CLI::App& app, int& exitCode);
void registerMeasurementsCommands(CLI::App& app, int& exitCode);
/// --assay, --strategy, --k, --margin, --budget, --pair-seed, --best-share (measurementscommands.cpp).
void addMeasuredPairOptions(CLI::App* command, AssayPairsSpec& spec);
/// Adds `label`: pending pairs labelled by their task's rule (a simulated expert).
void registerLabelCommand(CLI::App& app, int& exitCode);
/// Adds --db: a preference store, an SQLite file or a team store's postgresql:// URL.
void addDbOption(CLI::App* command, std::string& db);
void registerTeamStoreCommands(CLI::App& app, int& exitCode);
void registerStudy(CLI::App& app, int& exitCode);
void registerCompare(CLI::App& app, int& exitCode);
void registerLabelStudy(CLI::App& app, int& exitCode);
void registerProfile(CLI::App& app, int& exitCode);
/// Adds `prefs score` (after registerStoreCommands made `prefs`).
void registerLeastSureCommands(CLI::App& app, int& exitCode);
/// Adds `prefs agreement`, `prefs queue` and `prefs gold` (after registerStoreCommands made `prefs`).
void registerExpertCommands(CLI::App& app, int& exitCode);

/// One line with the task's metrics ("vsr 0.9800  rule_share 0.4795 ... (2000 samples)").
std::string formatMetrics(const SampleMetrics& metrics);
/// What --rule takes, from the tasks themselves.
std::string ruleHelp();

} // namespace d2dpo::cli
