// SPDX-License-Identifier: GPL-3.0-or-later
// The D2-DPO estimator for a batch of preference pairs: how t and the masks are drawn, which
// draws are averaged inside the loss and which outside, and the loss on the resulting margin.
// The paper's estimator is one t per pair shared by winner and loser, masks drawn independently,
// and the log-sigmoid outside the expectation; DpoConfig chooses among:
//   t-samples      T draws per pair, each its own loss term (averaged outside the loss)
//   vrpo-samples   V draws per pair whose divergences are averaged inside the loss (LLaDA 1.5's
//                  VRPO allocation: V timesteps, one mask each)
//   t-sampling     independent t per row, or stratified across the rows: t_i = (u + i)/R mod 1
//                  with one u (MDLM's low-discrepancy sampler)
//   mask-coupling  shared-t, or complementary: each draw also gets its complement at 1 - t, which
//                  corrupts exactly the positions the first draw kept, the two averaged inside the
//                  loss (DiffuCoder's coupled estimator): every position is read exactly once.
// Policy and reference always see the same x_t. Every draw is unbiased for the divergence, so the
// options change the variance (and, inside the loss, the bias of the log-sigmoid of a noisy margin).
#pragma once

#include <torch/types.h>

#include "base/config.h"
#include "diffusion/losses.h"

namespace d2dpo {

/// R times in [low, high): independent uniforms, or one stratified draw.
torch::Tensor drawTimes(int64_t rows, bool stratified, double low, double high, torch::Generator& generator,
                        const torch::TensorOptions& options);

/// The corrupted rows of a batch: x1, xt [rows, D] int64, t [rows]. Rows are the R = B T V winner
/// draws, then the R loser draws (row k B + b is pair b's k-th draw, k = outer * V + inner), then,
/// with complementary masks, the complements of those 2R rows in the same order.
struct CorruptedPairs {
    torch::Tensor x1, xt, t;
    int64_t draws = 0; ///< R
    bool complementary = false;
};
CorruptedPairs corruptPairs(const NoiseProcess& noise, const torch::Tensor& winners, const torch::Tensor& losers,
                            const DpoConfig& config, torch::Generator& generator);

/// The D2-DPO terms of corrupted pairs from their per-row divergences and nll (see corruptPairs).
DpoTerms dpoTermsFrom(const CorruptedPairs& pairs, const SequenceDivergences& rows, int64_t pairCount,
                      const DpoConfig& config);

/// One D2-DPO batch: winners, losers [B, D] int64 -> the loss and its terms. On the CPU both
/// models run only at the positions the divergence reads; on a GPU (where finding them would wait
/// for the device) on every position, in fixed shapes: the same values, tested.
DpoTerms d2dpoLoss(Denoiser& policy, Denoiser& reference, const NoiseProcess& noise, const torch::Tensor& winners,
                   const torch::Tensor& losers, const DpoConfig& config, torch::Generator& generator);

/// The rows of pairs [begin, end) of a corrupted batch of `pairCount` pairs, laid out as
/// corruptPairs lays out a batch of end - begin pairs.
CorruptedPairs pairsSlice(const CorruptedPairs& all, int64_t pairCount, int64_t begin, int64_t end);

/// The pairs [begin, end) of a batch that one process of a data-parallel run scores; end < 0:
/// to the batch's end.
struct PairShare {
    int64_t begin = 0;
    int64_t end = -1;
};

/// d2dpoLoss and backward() through the policy, in pieces of at most `piecePairs` pairs (gradient
/// accumulation). The draws are made once for the whole batch, as d2dpoLoss makes them, and each
/// piece's share of the batch's loss is back-propagated before the next piece runs: the gradients
/// are the whole batch's (to rounding) while only one piece's activations are alive. Returns the
/// terms detached, the divergences in piece order. piecePairs <= 0 (or >= B): one piece.
/// With `share`, only its pairs are scored, each piece still weighed against the whole batch: the
/// loss and gradients are the share's part of the batch's, which summed over the shares that
/// cover the batch (train/dpotrainer.cpp, across processes) are the batch's; the nll is the share's
/// part likewise, the divergences the share's own.
DpoTerms d2dpoBackward(Denoiser& policy, Denoiser& reference, const NoiseProcess& noise, const torch::Tensor& winners,
                       const torch::Tensor& losers, const DpoConfig& config, torch::Generator& generator,
                       int64_t piecePairs, PairShare share = {});

} // namespace d2dpo
