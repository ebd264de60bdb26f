// SPDX-License-Identifier: GPL-3.0-or-later
// How sure a fine-tuned model is about a pair of sequences: the implicit reward margin D2-DPO
// trains, r(a) - r(b) with r(x) = beta E_t[D^theta_ref(x_t | x)] (the reward whose difference the
// loss reads, paper eq. for L_CT), estimated with the loss's own estimator averaged over many
// draws. sigmoid(margin) is the policy's Bradley-Terry probability that a beats b: a margin near 0
// is a pair the policy cannot yet tell apart, the "informative pairs first" order's key. Equal
// models give exactly 0.
#pragma once

#include <cstdint>
#include <functional>

#include <torch/types.h>

#include "base/config.h"
#include "diffusion/noiseprocess.h"
#include "model/denoiser.h"

namespace d2dpo {

/// The draws of the estimate: `draws` independent times per pair, each with its complementary mask
/// (every position read once per draw), t in [tEpsilon, 1 - tEpsilon), beta and eta as `dpo`'s.
/// Independent times keep each pair's estimate unbiased (times stratified across a batch would
/// tie a pair's draws to its place in the batch).
struct MarginEstimate {
    int draws = 16;
    int64_t rows = 8192; ///< corrupted sequences per forward pass (4 per pair and draw): bounds memory
    /// Told the pairs scored so far and their total after each pass (a long scoring shows a count).
    std::function<void(int64_t scored, int64_t total)> progress;
};

/// first, second [P, D] int64 -> margins [P] double on the CPU: beta (D(first) - D(second)), each
/// D averaged over the draws, both sequences of a pair at the same times. No gradients.
torch::Tensor implicitRewardMargins(Denoiser& policy, Denoiser& reference, const NoiseProcess& noise,
                                    const torch::Tensor& first, const torch::Tensor& second, const DpoConfig& dpo,
                                    const MarginEstimate& estimate, torch::Generator& generator);

} // namespace d2dpo
