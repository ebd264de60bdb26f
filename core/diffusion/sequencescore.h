// SPDX-License-Identifier: GPL-3.0-or-later
// How likely a model finds a sequence: the evidence lower bound on log p(x) of a masking diffusion
// model (MDLM's continuous-time bound), the score a pretrained model ranks measured sequences by
// (its implicit reward against itself is 0 everywhere). A fine-tuned model's implicit reward is
// beta times the difference of the two models' bounds at equal draws, so the two scores tell one
// story (with remasking eta > 0 the reward also carries the factor 1 + eta t): the reference's
// bound before, the policy's bound and its reward after.
#pragma once

#include <cstdint>

#include <torch/types.h>

#include "diffusion/noiseprocess.h"
#include "model/denoiser.h"

namespace d2dpo {

/// x1 [N, D] int64 -> [N] double on the CPU:
///   ELBO(x1) = -E_{t ~ U[0,1)} [ sum over masked d of -log p(x1^d | x_t) / (1 - t) ],
/// with t the share of positions left unmasked (DESIGN.md's convention). Each sequence gets
/// `draws` times stratified over [0, 1) (one per stratum) with independent masks; `rows`
/// corrupted sequences go through the model at once. Masking noise only (the bound of another
/// process has other terms): any other is refused. No gradients.
torch::Tensor elboScores(Denoiser& model, const NoiseProcess& noise, const torch::Tensor& x1, int draws, int64_t rows,
                         torch::Generator& generator);

} // namespace d2dpo
