// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/pretrainjob.h"

#include <algorithm>
#include <filesystem>

#include <torch/torch.h>

#include "base/safeoutput.h"
#include "base/samplingchecks.h"
#include "base/timeutil.h"
#include "diffusion/noiseprocess.h"
#include "io/checkpoint.h"
#include "jobs/modelinstore.h"
#include "model/device.h"
#include "model/transformerdenoiser.h"
#include "tasks/task.h"
#include "train/evaluation.h"
#include "train/pretrainer.h"

namespace d2dpo {

std::string snapshotPath(const std::string& outputPath, int64_t step)
{
    std::filesystem::path path(outputPath);
    const std::string extension = path.has_extension() ? path.extension().string() : std::string(".d2dpo");
    path.replace_filename(path.stem().string() + ".step" + std::to_string(step) + extension);
    return path.string();
}

namespace {

/// A snapshot as its own checkpoint: pretrained, the steps so far, no evaluation.
Status writeSnapshot(const PretrainJobSpec& spec, const ModelSpec& modelSpec, const Denoiser& model, int64_t step,
                     const std::vector<std::string>& inputs, PretrainJobOutcome& outcome)
{
    const std::string path = snapshotPath(spec.outputPath, step);
    if (Status s = refuseOutputOfAStoredModel(spec.storePath, path); !s)
        return makeError("snapshot " + s.error());
    CheckpointInfo info{newCheckpointId(), "", "pretrained", modelSpec, toJson(spec.pretrain), "{}", step, utcNow()};
    if (Status s = saveCheckpoint(path, model, info, inputs); !s)
        return makeError("snapshot at step " + std::to_string(step) + ": " + s.error());
    outcome.snapshots.push_back(path);
    return Ok{};
}

} // namespace

Result<PretrainJobOutcome> runPretrainJob(const PretrainJobSpec& spec, PhaseListener& listener,
                                          const StopToken& stop, const EvaluationProgress& evaluationProgress)
{
    auto device = resolveDevice(spec.device);
    if (!device)
        return makeError(device.error());
    auto task = makeTask(spec.spec.task);
    if (!task)
        return makeError(task.error());
    if (Status s = validate(spec.spec); !s)
        return makeError(s.error());
    if (Status s = validate(spec.pretrain); !s)
        return makeError(s.error());
    if (Status s = validate(spec.sampling, spec.spec.noise); !s)
        return makeError(s.error());
    auto noise = makeNoiseProcess(spec.spec.noise, task.value()->vocabSize());
    if (!noise)
        return makeError(noise.error());

    std::vector<std::string> inputs = storeFiles(spec.storePath);
    inputs.insert(inputs.end(), spec.inputs.begin(), spec.inputs.end());
    if (Status s = checkOutputFile(spec.outputPath, inputs, /*writesCheckpoint=*/true); !s)
        return makeError("checkpoint " + s.error());
    // A model the store records (a reference others were fine-tuned from, a run's checkpoint) is
    // never replaced by new weights under the same record.
    if (Status s = refuseOutputOfAStoredModel(spec.storePath, spec.outputPath); !s)
        return makeError(s.error());
    if (spec.snapshotEvery < 0)
        return makeError("the snapshot interval must be at least 1 step (0 = no snapshots)");
    if (spec.snapshotEvery > 0 && spec.snapshotEvery < spec.pretrain.steps)
        if (Status s = checkOutputFile(snapshotPath(spec.outputPath, spec.snapshotEvery), inputs, true); !s)
            return makeError("snapshot " + s.error());
    ModelSpec modelSpec = spec.spec;
    modelSpec.task = task.value()->config(); // with its rule resolved

    listener.onPhase("pretrain", spec.pretrain.steps);
    PretrainJobOutcome outcome;
    torch::manual_seed(spec.seed);
    Denoiser model = makeDenoiser(spec.spec, task.value()->vocabSize(), device.value());
    outcome.parameters = parameterCount(model);
    listener.onLog(std::to_string(outcome.parameters) + " parameters");
    Pretrainer trainer(model, *task.value(), *noise.value(), spec.pretrain, spec.seed);
    trainer.writeSnapshots(spec.snapshotEvery, [&](int64_t step) {
        return writeSnapshot(spec, modelSpec, model, step, inputs, outcome);
    });
    const FinishedEvent done = trainer.run(listener, stop);
    outcome.stopped = done.status == RunStatus::Stopped;
    outcome.steps = done.stepsDone;
    if (done.status == RunStatus::Failed)
        return makeError(done.error);
    if (outcome.stopped && done.stepsDone == 0)
        return makeError("stopped before the first step; nothing was written");

    if (!outcome.stopped) { // a stop asks to end soon: the evaluation waits for a later `d2dpo eval`
        listener.onPhase("evaluate-reference", 0);
        auto generator = makeGenerator(spec.seed + 1000, device.value());
        try {
            SamplingConfig sampling = spec.sampling;
            const FittedCount count = fittedEvaluationCount(model, *task.value(), spec.spec.noise, sampling,
                                                            {spec.evaluationSamples, spec.evaluationSeconds}, listener);
            outcome.metrics = evaluateModel(model, *task.value(), spec.spec.noise, sampling, count.samples,
                                            generator, &stop, evaluationProgress);
            outcome.metrics.seed = spec.seed + 1000;
        } catch (const EvaluationStopped&) { // every step is written, without the evaluation
            outcome.stopped = true;
        }
    }
    // A Cancel that comes after the last batch still means "I don't want it".
    if (!spec.keepWhenStopped && (outcome.stopped || stop.stopRequested())) {
        outcome.stopped = true;
        return outcome;
    }
    listener.onPhase("write", 0);
    CheckpointInfo info{newCheckpointId(), "", "pretrained", modelSpec, toJson(spec.pretrain),
                        outcome.stopped ? std::string("{}") : outcome.metrics.toJson(), done.stepsDone, utcNow()};
    if (Status s = saveCheckpoint(spec.outputPath, model, info, inputs); !s)
        return makeError(s.error());
    outcome.checkpointId = info.id;
    if (!spec.storePath.empty())
        if (Status s = addWrittenModel(spec.storePath, info, spec.outputPath, spec.modelName); !s)
            return makeError(s.error());
    return outcome;
}

} // namespace d2dpo
