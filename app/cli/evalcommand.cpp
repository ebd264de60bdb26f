// `d2dpo eval`: sample from a checkpoint and print VSR, odd ratio, diversity and the histogram.
#include <cstdio>
#include <iostream>
#include <memory>

#include <torch/torch.h>

#include "checkpoint.h"
#include "common.h"
#include "device.h"
#include "evaluation.h"
#include "task.h"

namespace d2dpo::cli {

namespace {

struct EvalOptions {
    RuntimeOptions runtime;
    SamplingConfig sampling;
    std::string checkpoint;
    int64_t samples = 2000;
    bool json = false;
};

int run(const EvalOptions& o)
{
    if (Status s = validate(o.sampling); !s)
        return fail("eval", s.error());
    if (o.samples < 1)
        return fail("eval", "--samples must be >= 1");
    auto opened = openCheckpoint(o.runtime, o.checkpoint);
    if (!opened)
        return fail("eval", opened.error());
    LoadedCheckpoint& loaded = opened->checkpoint;

    auto generator = makeGenerator(o.runtime.seed, opened->device);
    const SampleMetrics m =
        evaluateModel(loaded.model, *opened->task, loaded.info.spec.noise, o.sampling, o.samples, generator);
    if (o.json) {
        std::cout << m.toJson() << "\n";
        return 0;
    }
    std::cout << "checkpoint " << loaded.info.id << " (" << loaded.info.kind << ", step " << loaded.info.step
              << (loaded.info.parentId.empty() ? "" : ", parent " + loaded.info.parentId) << ")\n"
              << formatMetrics(m) << "\n\n  value  share   histogram\n";
    const double total = double(m.samples);
    auto row = [&](const std::string& label, int64_t count) {
        const double share = count / total;
        std::printf("  %5s  %.3f   %s\n", label.c_str(), share, std::string(size_t(share * 60 + 0.5), '#').c_str());
    };
    for (size_t v = 0; v < m.histogram.size(); ++v)
        row(std::to_string(v), m.histogram[v]);
    row("inv", m.invalid);
    return 0;
}

} // namespace

void registerEval(CLI::App& app, int& exitCode)
{
    auto options = std::make_shared<EvalOptions>();
    CLI::App* c = app.add_subcommand("eval", "Measure a checkpoint: VSR, odd ratio, diversity, histogram over i");
    addRuntimeOptions(c, options->runtime);
    addSamplingOptions(c, options->sampling);
    c->add_option("--checkpoint,-c", options->checkpoint, "Checkpoint to evaluate")->required();
    c->add_option("--samples,-n", options->samples, "Number of samples")->capture_default_str();
    c->add_flag("--json", options->json, "Print the metrics as JSON");
    c->callback([options, &exitCode] { exitCode = run(*options); });
}

} // namespace d2dpo::cli
