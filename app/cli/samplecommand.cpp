// `d2dpo sample`: draw sequences from a checkpoint, one per line with its decoded value.
#include <fstream>
#include <iostream>
#include <memory>

#include <torch/torch.h>

#include "checkpoint.h"
#include "common.h"
#include "device.h"
#include "eulersampler.h"
#include "evaluation.h"
#include "task.h"

namespace d2dpo::cli {

namespace {

struct SampleOptions {
    RuntimeOptions runtime;
    SamplingConfig sampling;
    std::string checkpoint;
    int64_t count = 20;
    std::string out;
};

int run(const SampleOptions& o)
{
    if (Status s = validate(o.sampling); !s)
        return fail("sample", s.error());
    if (o.count < 1)
        return fail("sample", "--count must be >= 1");
    auto opened = openCheckpoint(o.runtime, o.checkpoint);
    if (!opened)
        return fail("sample", opened.error());
    const LoadedCheckpoint& loaded = opened->checkpoint;
    const Task& task = *opened->task;

    auto generator = makeGenerator(o.runtime.seed, opened->device);
    EulerSampler sampler(loaded.model, task.maskToken(), o.sampling.steps, loaded.info.spec.noise.eta);
    const auto samples = sampler.sample(o.count, generator, o.sampling.batch).to(torch::kCPU);
    const auto decoded = decodeToHost(task, samples);

    std::ofstream file;
    if (!o.out.empty()) {
        file.open(o.out, std::ios::trunc);
        if (!file)
            return fail("sample", "cannot write '" + o.out + "'");
    }
    std::ostream& out = o.out.empty() ? std::cout : file;
    for (int64_t i = 0; i < samples.size(0); ++i) {
        const auto row = samples[i].contiguous();
        const std::vector<int64_t> tokens(row.data_ptr<int64_t>(), row.data_ptr<int64_t>() + row.numel());
        const int64_t value = decoded[size_t(i)];
        out << task.format(tokens) << "\t" << (value < 0 ? "invalid" : std::to_string(value)) << "\n";
    }
    out.flush();
    if (!out)
        return fail("sample", "writing the samples failed");
    return 0;
}

} // namespace

void registerSample(CLI::App& app, int& exitCode)
{
    auto options = std::make_shared<SampleOptions>();
    CLI::App* c = app.add_subcommand("sample", "Generate sequences from a checkpoint");
    addRuntimeOptions(c, options->runtime);
    addSamplingOptions(c, options->sampling);
    c->add_option("--checkpoint,-c", options->checkpoint, "Checkpoint to sample from")->required();
    c->add_option("--count,-n", options->count, "Number of sequences")->capture_default_str();
    c->add_option("--out,-o", options->out, "Write to this file instead of standard output");
    c->callback([options, &exitCode] { exitCode = run(*options); });
}

} // namespace d2dpo::cli
