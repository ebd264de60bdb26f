// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo sample`: draw sequences from a checkpoint, one per line with what its task reads in it.
#include <iostream>
#include <memory>


#include "base/safeoutput.h"
#include "cli/common.h"
#include "cli/progressbar.h"
#include "facades/modelfiles.h"

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
    const bool toFile = !o.out.empty() && o.out != "-";
    if (toFile) // before sampling: a refused output wastes no time
        if (Status s = checkOutputFile(o.out, {o.checkpoint}); !s)
            return fail("sample", s.error());
    if (Status s = setUpRuntime(o.runtime); !s)
        return fail("sample", s.error());
    auto drawn = sampleCheckpoint(o.checkpoint, o.count, o.sampling, o.runtime.seed, o.runtime.device, o.rule,
                                  samplingProgress("sample"));
    if (!drawn)
        return fail("sample", drawn.error());

    std::string text;
    for (size_t i = 0; i < drawn->samples.size(); ++i) {
        const SequenceHint& hint = drawn->hints[i];
        text += drawn->samples[i] + "\t" + hint.value;
        if (!hint.rule.empty())
            text += "; " + hint.rule;
        text += "\n";
    }
    if (!toFile) {
        std::cout << text; // write errors are caught when main flushes standard output
        return 0;
    }
    if (Status s = AtomicFile::write(o.out, text, {o.checkpoint}); !s)
        return fail("sample", s.error());
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
    c->add_option("--count,-n", options->count, "Number of sequences")->check(CLI::Range(int64_t(1), int64_t(10'000'000)))->capture_default_str();
    c->add_option("--out,-o", options->out, "Write to this file (- or none: standard output)");
    addRuleOption(c, options->rule, ruleHelp() + " (default: the checkpoint's task's rule)");
    c->callback([options, &exitCode] { exitCode = run(*options); });
}

} // namespace d2dpo::cli
