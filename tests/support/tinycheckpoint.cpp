// SPDX-License-Identifier: GPL-3.0-or-later
// A tiny untrained model written as a checkpoint (tinycheckpoint.h).
#include "support/tinycheckpoint.h"

#include <cmath>
#include <limits>

#include <torch/torch.h>

#include "base/timeutil.h"
#include "io/checkpoint.h"
#include "model/transformerdenoiser.h"
#include "support/tinyconfigs.h"

namespace d2dpo::test {

Result<TinyCheckpoint> writeTinyCheckpoint(const std::string& path, const TinyCheckpointOptions& options)
{
    const ModelSpec spec = options.spec ? *options.spec : tinySpec(options.length, options.timeConditioning);
    torch::manual_seed(options.seed);
    Denoiser model = makeDenoiser(spec, options.vocabSize, torch::kCPU);
    {
        torch::NoGradGuard noGrad;
        if (options.weights == TinyCheckpointOptions::Weights::FirstNaN)
            model->parameters().front().view(-1)[0] = std::numeric_limits<float>::quiet_NaN();
        if (options.weights == TinyCheckpointOptions::Weights::AllNaN)
            for (auto& p : model->parameters())
                p.fill_(std::nan(""));
    }
    CheckpointInfo info;
    info.id = newCheckpointId();
    info.kind = options.parentId.empty() ? "pretrained" : "d2dpo";
    info.parentId = options.parentId;
    info.spec = spec;
    info.step = options.step;
    info.createdAt = options.createdAt.empty() ? utcNow() : options.createdAt;
    if (Status saved = saveCheckpoint(path, model, info); !saved)
        return makeError(saved.error());
    return TinyCheckpoint{path, info.id, spec};
}

} // namespace d2dpo::test
