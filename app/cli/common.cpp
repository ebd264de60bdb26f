// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/common.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <iostream>

#include "base/configlimits.h"
#include "base/samplemetrics.h"
#include "facades/runtimeinfo.h"
#include "facades/taskinfo.h"

namespace d2dpo::cli {

const CLI::Validator& finitePositive()
{
    static const CLI::Validator validator(
        [](std::string& text) -> std::string {
            double value = 0;
            if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value) || !(value > 0))
                return "must be a finite number > 0 (got " + text + ")";
            return {};
        },
        "FINITE > 0");
    return validator;
}

void refuseNonFiniteNumbers(CLI::App& app)
{
    // CLI11's ranges let NaN through (every comparison with it is false): one check for all.
    static const CLI::Validator finite(
        [](std::string& text) -> std::string {
            double value = 0;
            if (CLI::detail::lexical_cast(text, value) && !std::isfinite(value))
                return "must be a finite number (got " + text + ")";
            return {};
        },
        "");
    for (CLI::Option* option : app.get_options())
        if (option->get_type_name().rfind("FLOAT", 0) == 0)
            option->check(finite);
    for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; }))
        refuseNonFiniteNumbers(*command);
}

const CLI::Validator& storePath()
{
    static const CLI::Validator check(
        [](std::string& text) -> std::string {
            return text.empty() ? "must name a preference store file (it is empty)" : std::string();
        },
        "STORE");
    return check;
}

void addDbOption(CLI::App* c, std::string& db)
{
    c->add_option("--db", db, "Preference store: an SQLite file, or a team store's postgresql:// URL")
        ->check(storePath())
        ->capture_default_str();
}

CLI::Validator atLeast(int64_t minimum)
{
    return CLI::Validator(
        [minimum](std::string& text) -> std::string {
            int64_t value = 0;
            // Digits beyond int64's range would be read as its largest value, silently.
            const bool digits = !text.empty() && text.find_first_not_of("+0123456789") == std::string::npos;
            if (digits && std::from_chars(text.data() + (text[0] == '+'), text.data() + text.size(), value).ec ==
                              std::errc::result_out_of_range)
                return "must be a whole number from " + std::to_string(minimum) + " to " +
                       std::to_string(std::numeric_limits<int64_t>::max()) + " (got " + text + ")";
            if (!CLI::detail::lexical_cast(text, value) || value < minimum)
                return "must be a whole number >= " + std::to_string(minimum) + " (got " + text + ")";
            return {};
        },
        "INT >= " + std::to_string(minimum));
}

const CLI::Validator& seedRange()
{
    static const CLI::Validator validator = CLI::Range(uint64_t(0), uint64_t(std::numeric_limits<int64_t>::max()));
    return validator;
}

void addRuntimeOptions(CLI::App* c, RuntimeOptions& o)
{
    c->add_option("--seed", o.seed, "Random seed, 0..2^63-1 (same seed, same results on the same device)")
        ->check(seedRange())
        ->capture_default_str();
    c->add_option("--device", o.device, "auto (CUDA when available, else CPU), cpu, cuda or cuda:N")->capture_default_str();
    c->add_option("--threads", o.threads, "CPU threads for LibTorch (0 = the physical cores not busy with other work)")
        ->check(CLI::Range(0, 1024))
        ->capture_default_str();
}

void addTaskOptions(CLI::App* c, TaskOptions& o, const std::string& ruleHelp)
{
    c->add_option("--length,-N", o.length,
                  "Sequence length N of the binary-integers task (" + std::to_string(limits::kMinLength) + ".." +
                      std::to_string(limits::kMaxLength) + ")")
        ->check(CLI::Range(limits::kMinLength, limits::kMaxLength))
        ->capture_default_str();
    c->add_option("--data", o.data,
                  "Train on your own sequences: a FASTA file or one sequence per line (instead of binary integers)");
    c->add_option("--vocabulary", o.file.vocabulary,
                  "With --data: the symbols: data (read from the file), protein (20 amino acids; X when the data has "
                  "it), dna, rna, or "
                  "symbols:LIST")
        ->capture_default_str();
    c->add_option("--max-length", o.file.maxLength,
                  "With --data: longer sequences are refused (or cropped with --crop); 0 = up to " +
                      std::to_string(limits::kMaxLength))
        ->check(CLI::Range(0, limits::kMaxLength));
    c->add_flag("--crop", o.file.crop, "With --data: crop sequences longer than --max-length instead of refusing them");
    c->add_option("--valid", o.file.validity,
                  "With --data: what a valid sample is: symbols (vocabulary symbols, pads only at the end, a length "
                  "the data has) or in-data (one of the training sequences)")
        ->check(CLI::IsMember({"symbols", "in-data"}))
        ->capture_default_str();
    c->add_option("--rule", o.file.rule, ruleHelp);
}

Result<TaskConfig> makeTaskConfig(const TaskOptions& o)
{
    if (o.data.empty()) {
        TaskConfig task;
        task.length = o.length;
        task.rule = o.file.rule;
        return task;
    }
    auto read = readDataFile(o.data, o.file);
    if (!read)
        return makeError(read.error());
    std::cerr << "d2dpo: " << o.data << ": " << read->report.summary() << "\n";
    return read->task;
}

std::string ruleHelp()
{
    return "Rule that ranks sequences: " + TaskInfo::knownRules() + "; invalid always loses to valid, equal ranks tie";
}

void addRuleOption(CLI::App* c, std::string& rule, const std::string& help) { c->add_option("--rule", rule, help); }

void addModelOptions(CLI::App* c, ModelSpec& s)
{
    c->add_option("--d-model", s.model.dModel, "Transformer width")
        ->check(CLI::Range(limits::kMinDModel, limits::kMaxDModel))
        ->capture_default_str();
    c->add_option("--layers", s.model.layers, "Transformer layers")->check(CLI::Range(1, 64))->capture_default_str();
    c->add_option("--heads", s.model.heads, "Attention heads (must divide --d-model)")
        ->check(CLI::Range(1, 256))
        ->capture_default_str();
    c->add_option("--ff-multiplier", s.model.ffMultiplier, "Feed-forward width as a multiple of --d-model")
        ->check(CLI::Range(1, 16))
        ->capture_default_str();
    c->add_flag("!--no-time", s.model.timeConditioning, "Drop the time conditioning of the denoiser");
    c->add_option("--noise", s.noise.process,
                  "Noise process: masking (the paper) or uniform (each corrupted "
                  "position takes a uniformly drawn token)")
        ->check(CLI::IsMember({"masking", "uniform"}))
        ->capture_default_str();
    c->add_option("--eta", s.noise.eta, "Detailed-balance noise eta of the reverse process (>= 0; remasking for masking)")
        ->check(CLI::Range(0.0, 1e6))
        ->capture_default_str();
}

void addPretrainOptions(CLI::App* c, PretrainConfig& p)
{
    c->add_option("--pretrain-steps", p.steps, "Pretraining steps")->check(atLeast(1))->capture_default_str();
    c->add_option("--pretrain-batch", p.batch, "Pretraining batch size")->check(atLeast(1))->capture_default_str();
    c->add_option("--pretrain-lr", p.learningRate, "Pretraining learning rate (Adam)")
        ->check(finitePositive())
        ->capture_default_str();
    c->add_flag("--elbo", p.elboWeighting, "Weight the pretraining loss by 1/(1-t)");
}

void addPrecisionOption(CLI::App* c, Precision& precision, const std::string& help)
{
    c->add_option_function<std::string>(
         "--precision", [&precision](const std::string& name) { precision = *precisionFromName(name); },
         help + ": float32, or bf16 (bfloat16 operands, float32 sums; the weights, Adam and the loss stay float32) "
                "where the processor has bf16 units")
        ->check(CLI::IsMember(precisionNames()))
        ->default_str(std::string(precisionName(precision)));
}

void addDpoOptions(CLI::App* c, DpoConfig& d, DpoScheduleConfig& r)
{
    c->add_option("--beta", d.beta, "D2-DPO beta (> 0): smaller moves further from the reference")
        ->check(finitePositive())
        ->capture_default_str();
    c->add_option("--lr", d.learningRate, "D2-DPO learning rate (Adam)")->check(finitePositive())->capture_default_str();
    c->add_option("--batch", d.batch, "Preference pairs per step")->check(atLeast(1))->capture_default_str();
    c->add_option("--batch-piece", d.batchPiece,
                  "Pairs per forward and backward pass: the batch runs in pieces of this many and their gradients "
                  "add up to the same update with less memory (0 = the whole batch at once)")
        ->check(atLeast(0))
        ->capture_default_str();
    addPrecisionOption(c, d.precision, "The format of each step's matrix products");
    c->add_option("--lora-rank", d.loraRank,
                  "Train low-rank adapters of this rank on a model brought in as TorchScript instead of all its "
                  "weights (each weight matrix W becomes W + B A; 0 = every weight)")
        ->check(CLI::Range(0, limits::kMaxLoraRank))
        ->capture_default_str();
    c->add_option("--lora-targets", d.loraTargets,
                  "Which weight matrices get adapters: a regular expression searched in their names")
        ->capture_default_str();
    c->add_option("--steps", d.steps, "D2-DPO steps")->check(atLeast(1))->capture_default_str();
    c->add_option("--t-samples", d.tSamplesPerPair, "Draws of t per pair in each step, a loss term each")
        ->check(atLeast(1))
        ->capture_default_str();
    c->add_option("--vrpo-samples", d.vrpoSamples, "Draws of t per pair averaged inside the log-sigmoid (VRPO, LLaDA 1.5)")
        ->check(atLeast(1))
        ->capture_default_str();
    c->add_option("--t-sampling", d.tSampling, "independent: one uniform t per row; stratified: t_i = (u + i)/B mod 1")
        ->check(CLI::IsMember({"independent", "stratified"}))
        ->capture_default_str();
    c->add_option("--mask-coupling", d.maskCoupling,
                  "shared-t: winner and loser share t; complementary: also a draw at 1 - t masking what the first kept")
        ->check(CLI::IsMember({"shared-t", "complementary"}))
        ->capture_default_str();
    c->add_option("--loss", d.lossType, "Loss on the margin, as TRL's loss_type: sigmoid (the paper), ipo, hinge, robust")
        ->check(CLI::IsMember({"sigmoid", "ipo", "hinge", "robust"}))
        ->capture_default_str();
    c->add_option("--label-smoothing", d.labelSmoothing,
                  "sigmoid: conservative DPO's label smoothing; robust: the assumed flip rate (0 <= e < 0.5)")
        ->check(CLI::Range(0.0, 0.4999))
        ->capture_default_str();
    c->add_option("--rpo-alpha", d.rpoAlpha, "Weight of the winner's masked cross-entropy added to the loss")
        ->check(CLI::Range(0.0, 1e6))
        ->capture_default_str();
    c->add_option("--keep-best", r.keepBest,
                  "Keep the best evaluation's checkpoint as best.d2dpo by this metric (rule: the rule's share; a "
                  "leading - minimises), among evaluations with VSR >= the reference's - the slack");
    c->add_option("--keep-best-vsr-slack", r.keepBestVsrSlack,
                  "How far below the reference's VSR a best checkpoint may be")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    c->add_option("--eval-every", r.evalEvery, "Evaluate every k steps (0 = only at the end)")
        ->check(atLeast(0))
        ->capture_default_str();
    c->add_option("--eval-samples", r.evalSamples, "Samples per evaluation")->check(atLeast(1))->capture_default_str();
    c->add_option("--checkpoint-every", r.checkpointEvery, "Write a checkpoint every k steps (0 = only at the end)")
        ->check(atLeast(0))
        ->capture_default_str();
}

void addSamplingOptions(CLI::App* c, SamplingConfig& s)
{
    c->add_option("--sampler", s.sampler,
                  "exact: the continuous-time reverse process (one position per pass; a fine Euler step where "
                  "no exact sampler exists); euler: --sampling-steps Euler steps; confident: --sampling-steps "
                  "passes, each keeping the draws the model is surest of (fast; masking noise with eta 0 only)")
        ->check(CLI::IsMember({"exact", "euler", "confident"}))
        ->capture_default_str();
    c->add_option("--sampling-steps", s.steps, "Passes of the sampler (--sampler euler or confident)")
        ->check(atLeast(1))
        ->capture_default_str();
    c->add_option("--sampling-batch", s.batch, "Sequences per sampler forward pass")->check(atLeast(1))->capture_default_str();
}

Status setUpRuntime(const RuntimeOptions& options)
{
    auto runtime = d2dpo::setUpRuntime(options.threads, options.device);
    if (!runtime)
        return makeError(runtime.error());
    std::cerr << "d2dpo: " << runtime.value() << "\n";
    return Ok{};
}

int fail(const std::string& command, const std::string& message)
{
    std::cerr << "d2dpo " << command << ": error: " << message << "\n";
    return 1;
}

std::string formatMetrics(const SampleMetrics& m)
{
    std::string line;
    char buffer[96];
    for (const MetricValue& v : m.values) {
        std::snprintf(buffer, sizeof buffer, "%s %.4f  ", v.name.c_str(), v.value);
        line += buffer;
    }
    return line + "(" + m.provenance() + ")";
}

} // namespace d2dpo::cli
