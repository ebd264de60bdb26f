// `d2dpo pretrain`: fit a denoiser to the task's data and write a reference checkpoint.
#include <iostream>
#include <memory>

#include <torch/torch.h>

#include "checkpoint.h"
#include "common.h"
#include "device.h"
#include "evaluation.h"
#include "noiseprocess.h"
#include "pretrainer.h"
#include "consolelistener.h"
#include "task.h"

namespace d2dpo::cli {

namespace {

struct PretrainOptions {
    RuntimeOptions runtime;
    ModelSpec spec;
    PretrainConfig pretrain;
    SamplingConfig sampling;
    int64_t evalSamples = 2000;
    std::string out;
};

int run(const PretrainOptions& o)
{
    auto device = setUpRuntime(o.runtime);
    if (!device)
        return fail("pretrain", device.error());
    auto task = makeTask(o.spec.task);
    if (!task)
        return fail("pretrain", task.error());
    if (Status s = validate(o.spec); !s)
        return fail("pretrain", s.error());
    if (Status s = validate(o.pretrain); !s)
        return fail("pretrain", s.error());
    auto noise = makeNoiseProcess(o.spec.noise, task.value()->vocabSize());
    if (!noise)
        return fail("pretrain", noise.error());

    torch::manual_seed(o.runtime.seed);
    Denoiser model = makeDenoiser(o.spec, task.value()->vocabSize(), device.value());
    std::cerr << "d2dpo pretrain: " << parameterCount(model) << " parameters\n";
    ConsoleListener listener;
    listener.onPhase("pretrain", o.pretrain.steps);
    StopToken stop;
    Pretrainer trainer(model, *task.value(), *noise.value(), o.pretrain, o.runtime.seed);
    const FinishedEvent done = trainer.run(listener, stop);
    if (done.status != RunStatus::Completed)
        return fail("pretrain", done.error);

    auto generator = makeGenerator(o.runtime.seed + 1000, device.value());
    const SampleMetrics metrics =
        evaluateModel(model, *task.value(), o.spec.noise, o.sampling, o.evalSamples, generator);
    std::cout << "reference: " << formatMetrics(metrics) << "\n";

    CheckpointInfo info{newCheckpointId(), "", "pretrained", o.spec, toJson(o.pretrain), metrics.toJson(),
                        o.pretrain.steps, utcNow()};
    if (Status s = saveCheckpoint(o.out, model, info); !s)
        return fail("pretrain", s.error());
    std::cout << "wrote " << o.out << " (id " << info.id << ")\n";
    return 0;
}

} // namespace

void registerPretrain(CLI::App& app, int& exitCode)
{
    auto options = std::make_shared<PretrainOptions>();
    CLI::App* c = app.add_subcommand("pretrain", "Pretrain a reference denoiser on the binary-integers task");
    addRuntimeOptions(c, options->runtime);
    addModelOptions(c, options->spec);
    c->add_option("--steps", options->pretrain.steps, "Pretraining steps")->capture_default_str();
    c->add_option("--batch", options->pretrain.batch, "Batch size")->capture_default_str();
    c->add_option("--lr", options->pretrain.learningRate, "Learning rate (Adam)")->capture_default_str();
    c->add_flag("--elbo", options->pretrain.elboWeighting, "Weight the loss by 1/(1-t)");
    addSamplingOptions(c, options->sampling);
    c->add_option("--eval-samples", options->evalSamples, "Samples for the final evaluation")->capture_default_str();
    c->add_option("--out,-o", options->out, "Checkpoint file to write")->required();
    c->callback([options, &exitCode] { exitCode = run(*options); });
}

} // namespace d2dpo::cli
