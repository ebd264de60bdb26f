// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo pretrain`: fit a denoiser to the task's data and write a reference checkpoint.
#include <iostream>
#include <memory>

#include "base/modelverdict.h"
#include "cli/common.h"
#include "cli/consolelistener.h"
#include "cli/progressbar.h"
#include "cli/stopsignals.h"
#include "jobs/pretrainjob.h"

namespace d2dpo::cli {

namespace {

struct PretrainOptions {
    RuntimeOptions runtime;
    TaskOptions task;
    ModelSpec spec;
    PretrainConfig pretrain;
    SamplingConfig sampling;
    int64_t evalSamples = 2000;
    double evalSeconds = 0;
    std::string out;
    std::string db;
    int64_t snapshotEvery = 0;
};

int run(const PretrainOptions& o)
{
    if (Status s = setUpRuntime(o.runtime); !s)
        return fail("pretrain", s.error());
    auto task = makeTaskConfig(o.task);
    if (!task)
        return fail("pretrain", task.error());
    PretrainJobSpec job;
    job.spec = o.spec;
    job.spec.task = task.value();
    job.pretrain = o.pretrain;
    job.sampling = o.sampling;
    job.evaluationSamples = o.evalSamples;
    job.evaluationSeconds = o.evalSeconds;
    job.seed = o.runtime.seed;
    job.device = o.runtime.device;
    job.outputPath = o.out;
    job.storePath = o.db;
    job.snapshotEvery = o.snapshotEvery;
    if (!o.task.data.empty())
        job.inputs.push_back(o.task.data);
    ConsoleListener listener;
    // The evaluation draws in batches of --sampling-batch: a bar when it takes more than a second.
    auto outcome = runPretrainJob(job, listener, stopOnSignals(),
                                  samplingProgress("evaluate"));
    if (!outcome)
        return exitCodeAfterStop(fail("pretrain", outcome.error()));
    for (const std::string& snapshot : outcome->snapshots)
        std::cout << "snapshot " << snapshot << "\n";
    if (outcome->stopped) {
        std::cout << "stopped after " << outcome->steps << " of " << o.pretrain.steps << " steps; wrote " << o.out
                  << " (id " << outcome->checkpointId << ", not evaluated: d2dpo eval -c " << o.out << ")\n";
        return exitCodeAfterStop(130);
    }
    std::cout << "reference: " << formatMetrics(outcome->metrics) << "\n";
    if (const std::string advice = weakModelAdvice(outcome->metrics); !advice.empty())
        std::cout << "note: " << advice << "\n";
    std::cout << "wrote " << o.out << " (id " << outcome->checkpointId << ")\n";
    return 0;
}

} // namespace

void registerPretrain(CLI::App& app, int& exitCode)
{
    auto options = std::make_shared<PretrainOptions>();
    CLI::App* c = app.add_subcommand("pretrain", "Pretrain a reference denoiser on the binary-integers task or on --data FILE");
    addRuntimeOptions(c, options->runtime);
    addTaskOptions(c, options->task, ruleHelp() + "; what the checkpoint's rule metrics measure");
    addModelOptions(c, options->spec);
    c->add_option("--steps", options->pretrain.steps, "Pretraining steps")->check(atLeast(1))->capture_default_str();
    c->add_option("--batch", options->pretrain.batch, "Batch size")->check(atLeast(1))->capture_default_str();
    c->add_option("--lr", options->pretrain.learningRate, "Learning rate (Adam)")->check(finitePositive())->capture_default_str();
    c->add_flag("--elbo", options->pretrain.elboWeighting, "Weight the loss by 1/(1-t)");
    addSamplingOptions(c, options->sampling);
    c->add_option("--eval-samples", options->evalSamples, "Samples for the final evaluation")->check(atLeast(1))->capture_default_str();
    c->add_option("--eval-seconds", options->evalSeconds,
                  "Evaluate on as many samples as fit in about this many seconds at the model's cost (one pass is "
                  "timed first; at most --eval-samples, at least 20); 0: exactly --eval-samples")
        ->check(CLI::Range(0.0, 86400.0));
    c->add_option("--out,-o", options->out, "Checkpoint file to write")->required();
    c->add_option("--snapshot-every", options->snapshotEvery,
                  "Also write the model every STEPS steps, beside the output as NAME.stepN.d2dpo (not evaluated: "
                  "d2dpo eval measures one); 0 = no snapshots")
        ->check(atLeast(0))
        ->capture_default_str();
    c->add_option("--db", options->db, "Also add the new model (and its task) to this preference store")
        ->check(storePath());
    c->callback([options, &exitCode] { exitCode = run(*options); });
}

} // namespace d2dpo::cli
