// SPDX-License-Identifier: GPL-3.0-or-later
#include "diffusion/noiseprocess.h"

#include <torch/torch.h>

#include "diffusion/maskingnoise.h"
#include "diffusion/uniformnoise.h"

namespace d2dpo {

torch::Tensor NoiseProcess::readMask(const torch::Tensor& xt) const
{
    return torch::zeros({xt.numel()}, xt.options().dtype(torch::kBool)).index_fill_(0, positionsRead(xt), true).view_as(xt);
}

torch::Tensor NoiseProcess::corrupt(const torch::Tensor& x1, const torch::Tensor& t, torch::Generator& generator) const
{
    return corruptWhere(x1, torch::rand(x1.sizes(), generator, t.options()).ge(t.unsqueeze(1)), generator);
}

Result<std::unique_ptr<NoiseProcess>> makeNoiseProcess(const NoiseConfig& config, int64_t vocabSize)
{
    if (Status s = validate(config); !s)
        return makeError(s.error());
    if (config.process == "uniform")
        return std::unique_ptr<NoiseProcess>(std::make_unique<UniformNoise>(vocabSize, config.eta));
    return std::unique_ptr<NoiseProcess>(std::make_unique<MaskingNoise>(vocabSize, config.eta));
}

} // namespace d2dpo
