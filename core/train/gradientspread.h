// SPDX-License-Identifier: GPL-3.0-or-later
// How noisy a D2-DPO estimator's gradient is: the spread of the loss gradient over independent
// draws of t and masks on one fixed batch of pairs (the pairs fixed, so that only the estimator's
// own randomness is measured). The study reports it at the start of training, where every setting
// sees the same policy (its reference).
#pragma once

#include <cstdint>

#include <torch/types.h>

#include "base/config.h"
#include "diffusion/noiseprocess.h"
#include "model/denoiser.h"

namespace d2dpo {

struct GradientSpread {
    double std = 0;      ///< sqrt(E ||g - E g||^2): the root of the gradient covariance's trace
    double meanNorm = 0; ///< ||E g||
    double relative() const { return meanNorm > 0 ? std / meanNorm : 0; }
};

/// `draws` gradients of d2dpoLoss with respect to the policy's parameters (the parameters' .grad
/// is left untouched), on `batch` pairs drawn once with `seed`. winners, losers [P, D] int64.
GradientSpread gradientSpread(Denoiser& policy, Denoiser& reference, const NoiseProcess& noise,
                              const torch::Tensor& winners, const torch::Tensor& losers, const DpoConfig& config,
                              int draws, uint64_t seed);

} // namespace d2dpo
