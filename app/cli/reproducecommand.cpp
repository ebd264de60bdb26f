// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo reproduce`: the paper's experiment end to end with progress, a summary table, the wall
// time of each phase, and the curves written as CSV and JSON.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "base/timeutil.h"
#include "cli/common.h"
#include "cli/consolelistener.h"
#include "cli/stopsignals.h"
#include "research/curves.h"
#include "research/experiment.h"
#include "cli/progressbar.h"

namespace d2dpo::cli {

namespace {

struct ReproduceOptions {
    RuntimeOptions runtime;
    TaskOptions task;
    ReproduceConfig config;
    double goal = 0; ///< the rule share the fine-tuned model should reach; 0: 0.95 (binary), 0.8 (files)
    bool force = false;
};

std::string describeTask(const TaskConfig& t)
{
    if (t.name == "binary-integers")
        return "binary-integers N=" + std::to_string(t.length) + ", rule " + t.rule;
    return "sequences from " + t.source + " (" + std::to_string(t.data.size()) + ", lengths " +
           std::to_string(t.minLength) + ".." + std::to_string(t.length) + ", valid: " + t.validity + "), rule " + t.rule;
}

void printSummary(const ReproduceReport& r, double goal)
{
    const auto& ref = r.reference;
    const auto& fin = r.finetuned;
    const DpoConfig& d = r.config.dpo;
    const ModelConfig& model = r.config.spec.model;
    const std::string described = model.isBroughtIn()
                                      ? (model.isTorchScript() ? std::string("a TorchScript model") : model.architecture + " weights") +
                                            " of " + std::to_string(model.parameters) + " parameters"
                                      : "d_model " + std::to_string(model.dModel) + ", " +
                                            std::to_string(model.layers) + " layers";
    std::printf("\nD2-DPO reproduction: %s, %s, %s noise, %s, beta %g, "
                "eta %g, lr %g, batch %d, %d steps\n", describeTask(r.config.spec.task).c_str(), described.c_str(),
                r.config.spec.noise.process.c_str(), r.sampler.c_str(), d.beta, r.config.spec.noise.eta,
                d.learningRate, d.batch, d.steps);
    std::printf("loss %s (label smoothing %g, rpo_alpha %g); estimator: t-samples %d, vrpo-samples %d, %s t, %s masks\n"
                "%s\n\n", d.lossType.c_str(), d.labelSmoothing, d.rpoAlpha, d.tSamplesPerPair, d.vrpoSamples,
                d.tSampling.c_str(), d.maskCoupling.c_str(), r.runtime.c_str());
    std::printf("  %-22s %10s\n", "phase", "wall time");
    std::printf("  %-22s %10s\n", "pretrain", ProgressBar::formatDuration(r.pretrainSeconds).c_str());
    std::printf("  %-22s %10s\n", "evaluate reference", ProgressBar::formatDuration(r.referenceEvalSeconds).c_str());
    std::printf("  %-22s %10s\n\n", "D2-DPO (with evals)", ProgressBar::formatDuration(r.dpoSeconds).c_str());

    std::printf("  %-22s %10s %11s %9s\n", "metric", "reference", "fine-tuned", "change");
    auto row = [](const std::string& name, double a, double b) {
        std::printf("  %-22s %10.4f %11.4f %+9.4f\n", name.c_str(), a, b, b - a);
    };
    for (const MetricValue& v : ref.values)
        row(v.name, v.value, fin.valueOr0(v.name));
    if (!r.dpoProgress.empty()) {
        const auto& first = r.dpoProgress.front();
        const auto& last = r.dpoProgress.back();
        std::printf("  %-22s %10.4f %11.4f %+9.4f   (first and last step)\n", "D2-DPO loss", first.loss, last.loss,
                    last.loss - first.loss);
    }
    if (r.gradientStd > 0)
        std::printf("  gradient at step 0: std %.4g over draws, mean norm %.4g (std / norm %.3f)\n", r.gradientStd,
                    r.gradientMeanNorm, r.gradientMeanNorm > 0 ? r.gradientStd / r.gradientMeanNorm : 0.0);
    if (!r.dpoFinished.bestDescription.empty())
        std::printf("  best checkpoint (%s): %s%s%s\n", r.config.schedule.keepBest.c_str(), r.dpoFinished.bestDescription.c_str(),
                    r.dpoFinished.bestCheckpointPath.empty() ? "" : " -> ", r.dpoFinished.bestCheckpointPath.c_str());
    const bool ruleOk = fin.valueOr0(fin.ruleMetric) >= goal;
    const bool vsrOk = fin.vsr() >= ref.vsr() - 0.01;
    std::printf("\n  %s >= %g: %s    VSR >= reference - 0.01: %s    reference VSR >= 0.95: %s\n",
                fin.ruleMetric.c_str(), goal, ruleOk ? "yes" : "NO", vsrOk ? "yes" : "NO",
                ref.vsr() >= 0.95 ? "yes" : "NO");
}

int run(ReproduceOptions o)
{
    if (Status s = setUpRuntime(o.runtime); !s)
        return fail("reproduce", s.error());
    o.config.seed = o.runtime.seed;
    auto task = makeTaskConfig(o.task);
    if (!task)
        return fail("reproduce", task.error());
    o.config.spec.task = task.value();
    if (o.goal <= 0)
        o.goal = o.task.data.empty() ? 0.95 : 0.8;
    if (Status s = validate(o.config); !s)
        return fail("reproduce", s.error());
    namespace fs = std::filesystem;
    if (o.config.outputFolder.empty()) {
        std::string stamp = utcNow();
        for (char& ch : stamp)
            if (ch == ':')
                ch = '-';
        o.config.outputFolder = "runs/reproduce-" + stamp;
    }
    std::error_code ec;
    if (fs::exists(o.config.outputFolder, ec) && !fs::is_empty(o.config.outputFolder, ec) && !o.force)
        return fail("reproduce", "output folder '" + o.config.outputFolder +
                                     "' is not empty; choose another with --out or pass --force");

    ConsoleListener listener;
    auto report = reproduce(o.config, o.runtime.device, listener, stopOnSignals());
    if (!report)
        return exitCodeAfterStop(fail("reproduce", report.error()));
    printSummary(report.value(), o.goal);
    if (Status s = writeCurves(o.config.outputFolder, report.value()); !s)
        return fail("reproduce", s.error());
    std::printf("\n  curves: %s/{pretrain,d2dpo,evaluations}.csv and report.json\n"
                "  checkpoints: %s (reference), %s (fine-tuned)\n",
                o.config.outputFolder.c_str(), report->referenceCheckpoint.c_str(),
                report->finetunedCheckpoint.c_str());
    return exitCodeAfterStop(0);
}

} // namespace

void registerReproduce(CLI::App& app, int& exitCode)
{
    auto options = std::make_shared<ReproduceOptions>();
    CLI::App* c = app.add_subcommand(
        "reproduce", "The paper's experiment: pretrain, evaluate, fine-tune toward the task's rule with D2-DPO (the "
                     "paper's task by default, or --data FILE with --rule), summarise");
    addRuntimeOptions(c, options->runtime);
    addTaskOptions(c, options->task, ruleHelp() + "; the rule-made pairs follow it (default: the task's own)");
    c->add_option("--goal", options->goal, "Rule share the summary checks (default 0.95 on binary integers, 0.8 on files)")
        ->check(CLI::Range(0.0, 1.0));
    addModelOptions(c, options->config.spec);
    addPretrainOptions(c, options->config.pretrain);
    addDpoOptions(c, options->config.dpo, options->config.schedule);
    addSamplingOptions(c, options->config.sampling);
    c->add_option("--pairs", options->config.preferencePairs, "Rule-made preference pairs")->check(atLeast(1))->capture_default_str();
    c->add_option("--out,-o", options->config.outputFolder,
                  "Folder for checkpoints and curves (default: runs/reproduce-<UTC time>)");
    c->add_flag("--force", options->force, "Write into a non-empty output folder");
    c->add_option("--reference", options->config.referenceCheckpoint,
                  "Start from this pretrained model instead of pretraining (its task, model and noise apply)")
        ->check(CLI::ExistingFile);
    c->add_option("--gradient-draws", options->config.gradientDraws,
                  "Measure the spread of the loss gradient over this many draws before fine-tuning")
        ->check(CLI::Range(0, 4096));
    c->callback([c, options, &exitCode] {
        // A given reference brings its own model and noise: these options would be ignored.
        if (!options->config.referenceCheckpoint.empty())
            for (const char* name : {"--d-model", "--layers", "--heads", "--ff-multiplier", "--no-time", "--noise", "--eta"})
                if (c->get_option(name)->count() > 0)
                    throw CLI::ValidationError(name, "the reference model (--reference) brings its own model and noise; "
                                                     "leave this out");
        exitCode = run(*options);
    });
}

} // namespace d2dpo::cli
