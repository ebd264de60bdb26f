// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/pretrainjob.h"

#include <filesystem>

#include <torch/torch.h>

#include "base/safeoutput.h"
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

Result<PretrainJobOutcome> runPretrainJob(const PretrainJobSpec& spec, PhaseListener& listener,
                                          const StopToken& stop)
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

    listener.onPhase("pretrain", spec.pretrain.steps);
    PretrainJobOutcome outcome;
    torch::manual_seed(spec.seed);
    Denoiser model = makeDenoiser(spec.spec, task.value()->vocabSize(), device.value());
    outcome.parameters = parameterCount(model);
    listener.onLog(std::to_string(outcome.parameters) + " parameters");
    Pretrainer trainer(model, *task.value(), *noise.value(), spec.pretrain, spec.seed);
    const FinishedEvent done = trainer.run(listener, stop);
    outcome.stopped = done.status == RunStatus::Stopped;
    outcome.steps = done.stepsDone;
    if (done.status == RunStatus::Failed)
        return makeError(done.error);
    if (outcome.stopped && done.stepsDone == 0)
        return makeError("stopped before the first step; nothing was written");

    if (!outcome.stopped) { // a stop asks to end soon: the evaluation waits for a later `d2dpo eval`
        auto generator = makeGenerator(spec.seed + 1000, device.value());
        outcome.metrics =
            evaluateModel(model, *task.value(), spec.spec.noise, spec.sampling, spec.evaluationSamples, generator);
        outcome.metrics.seed = spec.seed + 1000;
    }
    ModelSpec modelSpec = spec.spec;
    modelSpec.task = task.value()->config(); // with its rule resolved
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
