// SPDX-License-Identifier: GPL-3.0-or-later
// The sampler against the noise process its models have: checked before a job starts, so that a
// sampler the models cannot use is refused before minutes of pretraining, not after them.
#pragma once

#include "base/config.h"

namespace d2dpo {

/// validate(sampling), and the confident sampler only for the masking process without remasking.
Status validate(const SamplingConfig& sampling, const NoiseConfig& noise);

} // namespace d2dpo
