// `d2dpo train`: D2-DPO fine-tuning of a checkpoint on rule-made preference pairs (the paper's
// dataset: winner b_i for a random odd i, loser b_j for a random even j).
#include <filesystem>
#include <iostream>
#include <memory>

#include <torch/torch.h>

#include "checkpoint.h"
#include "common.h"
#include "consolelistener.h"
#include "device.h"
#include "dpotrainer.h"
#include "noiseprocess.h"
#include "task.h"

namespace d2dpo::cli {

namespace {

struct TrainOptions {
    RuntimeOptions runtime;
    DpoConfig dpo;
    SamplingConfig sampling;
    std::string checkpoint;
    std::string rule = "odd";
    int64_t pairs = 20000;
    std::string out;
};

int run(const TrainOptions& o)
{
    auto device = setUpRuntime(o.runtime);
    if (!device)
        return fail("train", device.error());
    if (Status s = validate(o.dpo); !s)
        return fail("train", s.error());
    if (Status s = validate(o.sampling); !s)
        return fail("train", s.error());
    if (o.pairs < 1)
        return fail("train", "--pairs must be >= 1");
    auto loaded = loadCheckpoint(o.checkpoint, device.value());
    if (!loaded)
        return fail("train", loaded.error());
    auto task = makeTask(loaded->info.spec.task);
    if (!task)
        return fail("train", task.error());
    auto noise = makeNoiseProcess(loaded->info.spec.noise, task.value()->vocabSize());
    if (!noise)
        return fail("train", noise.error());

    auto pairGenerator = makeGenerator(o.runtime.seed + 2000, device.value());
    const auto [winners, losers] = task.value()->rulePairs(o.pairs, pairGenerator, device.value());
    std::cerr << "d2dpo train: " << o.pairs << " rule-made pairs (" << o.rule << " preferred), reference "
              << loaded->info.id << "\n";

    DpoTrainer trainer(loaded->model, *task.value(), *noise.value(), loaded->info.spec, o.dpo, o.sampling,
                       o.runtime.seed);
    trainer.setPreferences(winners, losers);
    trainer.setCheckpointing(o.out, loaded->info.id);
    ConsoleListener listener;
    listener.onPhase("d2dpo", o.dpo.steps);
    StopToken stop;
    const FinishedEvent done = trainer.run(listener, stop);
    if (done.status == RunStatus::Failed)
        return fail("train", done.error + (done.lastCheckpointPath.empty()
                                               ? ""
                                               : " (last good checkpoint: " + done.lastCheckpointPath + ")"));
    std::cout << "fine-tuned checkpoint: " << done.lastCheckpointPath << "\n";
    return 0;
}

} // namespace

void registerTrain(CLI::App& app, int& exitCode)
{
    auto options = std::make_shared<TrainOptions>();
    CLI::App* c = app.add_subcommand("train", "Fine-tune a checkpoint with D2-DPO on rule-made preference pairs");
    addRuntimeOptions(c, options->runtime);
    addDpoOptions(c, options->dpo);
    addSamplingOptions(c, options->sampling);
    c->add_option("--checkpoint,-c", options->checkpoint, "Reference checkpoint (the policy starts equal to it)")
        ->required();
    c->add_option("--rule", options->rule, "Preference rule for the pairs")
        ->check(CLI::IsMember({"odd"}))
        ->capture_default_str();
    c->add_option("--pairs", options->pairs, "Number of rule-made pairs")->capture_default_str();
    c->add_option("--out,-o", options->out, "Folder for the checkpoints")->required();
    c->callback([options, &exitCode] { exitCode = run(*options); });
}

} // namespace d2dpo::cli
