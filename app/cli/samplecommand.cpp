// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo sample`: draw sequences from a checkpoint, one per line with what its task reads in it.
#include <fstream>
#include <iostream>
#include <memory>


#include "cli/common.h"
#include "jobs/modelfiles.h"

namespace d2dpo::cli {

namespace {

struct SampleOptions {
    RuntimeOptions runtime;
    SamplingConfig sampling;
    std::string checkpoint;
    int64_t count = 20;
    std::string out;
    std::string rule;
};

int run(const SampleOptions& o)
{
    if (Status s = validate(o.sampling); !s)
        return fail("sample", s.error());
    if (o.count < 1)
        return fail("sample", "--count must be >= 1");
    if (Status s = setUpRuntime(o.runtime); !s)
        return fail("sample", s.error());
    auto drawn = sampleCheckpoint(o.checkpoint, o.count, o.sampling, o.runtime.seed, o.runtime.device, o.rule);
    if (!drawn)
        return fail("sample", drawn.error());

    std::ofstream file;
    if (!o.out.empty()) {
        file.open(o.out, std::ios::trunc);
        if (!file)
            return fail("sample", "cannot write '" + o.out + "'");
    }
    std::ostream& out = o.out.empty() ? std::cout : file;
    for (size_t i = 0; i < drawn->samples.size(); ++i) {
        const SequenceHint& hint = drawn->hints[i];
        out << drawn->samples[i] << "\t" << hint.value << (hint.rule.empty() ? "" : "; " + hint.rule) << "\n";
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
    addRuleOption(c, options->rule, ruleHelp() + " (default: the checkpoint's task's rule)");
    c->callback([options, &exitCode] { exitCode = run(*options); });
}

} // namespace d2dpo::cli
