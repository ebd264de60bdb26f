// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo eval`: sample from a checkpoint and print its task's metrics and histogram.
#include <cstdio>
#include <iostream>
#include <memory>


#include "base/configlimits.h"
#include "cli/common.h"
#include "cli/progressbar.h"
#include "facades/modelfiles.h"

namespace d2dpo::cli {

namespace {

struct EvalOptions {
    RuntimeOptions runtime;
    SamplingConfig sampling;
    std::string checkpoint;
    int64_t samples = 2000;
    bool json = false;
    std::string rule;
};

int run(const EvalOptions& o)
{
    if (Status s = validate(o.sampling); !s)
        return fail("eval", s.error());
    if (o.samples < 1)
        return fail("eval", "--samples must be >= 1");
    if (Status s = setUpRuntime(o.runtime); !s)
        return fail("eval", s.error());
    auto measured = sampleCheckpoint(o.checkpoint, o.samples, o.sampling, o.runtime.seed, o.runtime.device, o.rule,
                                  samplingProgress("eval"));
    if (!measured)
        return fail("eval", measured.error());
    const CheckpointSummary& checkpoint = measured->checkpoint;
    const SampleMetrics& m = measured->metrics;
    if (o.json) {
        std::cout << m.toJson() << "\n";
        return 0;
    }
    std::cout << "checkpoint " << checkpoint.id << " (" << checkpoint.kind << ", step " << checkpoint.step
              << (checkpoint.parentId.empty() ? "" : ", parent " + checkpoint.parentId) << ")\n"
              << formatMetrics(m) << "\n\n  " << m.histogram.axis << "  share   histogram\n";
    const double total = double(m.samples);
    auto row = [&](const std::string& label, int64_t count) {
        const double share = count / total;
        std::printf("  %5s  %.3f   %s\n", label.c_str(), share, std::string(size_t(share * 60 + 0.5), '#').c_str());
    };
    for (size_t v = 0; v < m.histogram.counts.size(); ++v)
        row(m.histogram.labels[v], m.histogram.counts[v]);
    row("inv", m.histogram.invalid);
    return 0;
}

} // namespace

void registerEval(CLI::App& app, int& exitCode)
{
    auto options = std::make_shared<EvalOptions>();
    CLI::App* c = app.add_subcommand("eval", "Measure a checkpoint with its task's metrics (VSR, the rule's share, diversity) and histogram");
    addRuntimeOptions(c, options->runtime);
    addSamplingOptions(c, options->sampling);
    c->add_option("--checkpoint,-c", options->checkpoint, "Checkpoint to evaluate")->required();
    // Bounded as a run's evaluations are: two billion samples would run for days without a word.
    c->add_option("--samples,-n", options->samples, "Number of samples")
        ->check(CLI::Range(int64_t(1), int64_t(limits::kMaxEvalSamples)))
        ->capture_default_str();
    c->add_flag("--json", options->json, "Print the metrics as JSON");
    addRuleOption(c, options->rule, ruleHelp() + " (default: the checkpoint's task's rule)");
    c->callback([options, &exitCode] { exitCode = run(*options); });
}

} // namespace d2dpo::cli
