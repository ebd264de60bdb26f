// SPDX-License-Identifier: GPL-3.0-or-later
#include "diffusion/noiseprocess.h"

#include "diffusion/maskingnoise.h"

namespace d2dpo {

Result<std::unique_ptr<NoiseProcess>> makeNoiseProcess(const NoiseConfig& config, int64_t vocabSize)
{
    if (Status s = validate(config); !s)
        return makeError(s.error());
    return std::unique_ptr<NoiseProcess>(std::make_unique<MaskingNoise>(vocabSize, config.eta));
}

} // namespace d2dpo
