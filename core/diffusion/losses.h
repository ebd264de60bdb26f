// SPDX-License-Identifier: GPL-3.0-or-later
// The training objectives: the pretraining cross-entropy on masked positions, and the D2-DPO
// loss, both in the masking closed form the trainer uses and in the general rate-matrix form
// (paper eq. for D^theta_ref) that other noise processes will use. Tests prove the two agree.
#pragma once

#include <torch/types.h>

#include "model/denoiser.h"
#include "diffusion/noiseprocess.h"
#include "base/trainlistener.h"

namespace d2dpo {

/// Cross-entropy at the positions the process reads (NoiseProcess::positionsRead: the masked ones),
/// t ~ U[0, 1); with `elboWeighting` each position is weighted by 1/(1 - t). x1 [B, D] int64 ->
/// scalar.
torch::Tensor pretrainLoss(Denoiser& model, const NoiseProcess& noise, const torch::Tensor& x1,
                           torch::Generator& generator, bool elboWeighting);

/// D2-DPO terms for a batch of pairs. `divergenceChosen`/`Rejected` are D(x_t^w|x_1^w) and
/// D(x_t^l|x_1^l) summed over positions, [B]; rewards are beta times them.
struct DpoTerms {
    torch::Tensor loss;               ///< scalar: mean of -log sigmoid(beta (D_w - D_l))
    torch::Tensor divergenceChosen;   ///< [B]
    torch::Tensor divergenceRejected; ///< [B]
};

/// -log sigmoid(beta (dChosen - dRejected)), averaged: dChosen, dRejected [B] -> DpoTerms.
DpoTerms dpoLossFromDivergences(const torch::Tensor& dChosen, const torch::Tensor& dRejected, double beta);

/// General rate-matrix form of sum_d D^{theta,d}_ref: sum over j != x_t of
/// R^q log(R^theta / R^ref) + R^ref - R^theta. x_t [B, D] int64; rates [B, D, V] -> [B].
torch::Tensor rateMatrixDivergence(const torch::Tensor& xt, const torch::Tensor& rateQ, const torch::Tensor& rateTheta,
                                   const torch::Tensor& rateRef);

/// The same divergence as NoiseProcess::divergence, computed through the process's rates.
torch::Tensor generalDivergence(const NoiseProcess& noise, const torch::Tensor& xt, const torch::Tensor& x1,
                                const torch::Tensor& logpTheta, const torch::Tensor& logpRef, const torch::Tensor& t);

/// The D2-DPO terms for corrupted pairs: x1 = [winners; losers] and xt [2R, D] int64, t [2R],
/// with both models run on every position (fixed shapes, no host sync: the GPU path) ...
DpoTerms d2dpoTermsAllPositions(Denoiser& policy, Denoiser& reference, const NoiseProcess& noise,
                                const torch::Tensor& x1, const torch::Tensor& xt, const torch::Tensor& t, double beta);
/// ... or only at the positions the divergence reads (less work; the CPU path). Equal values.
DpoTerms d2dpoTermsAtPositions(Denoiser& policy, Denoiser& reference, const NoiseProcess& noise,
                               const torch::Tensor& x1, const torch::Tensor& xt, const torch::Tensor& t, double beta);

/// One D2-DPO batch in the closed form: for every pair one t ~ U[0, 1 - tEpsilon] shared by
/// winner and loser (repeated `tSamples` times with fresh t), one fused policy forward over
/// winners and losers, one reference forward without gradients. winners, losers [B, D] int64.
DpoTerms d2dpoLoss(Denoiser& policy, Denoiser& reference, const NoiseProcess& noise, const torch::Tensor& winners,
                   const torch::Tensor& losers, double beta, double tEpsilon, int tSamples,
                   torch::Generator& generator);

/// rewards/chosen, rejected, margins, accuracies from a batch's terms, as a [4] tensor on the
/// terms' device (nothing is read on the host).
torch::Tensor rewardFigures(const DpoTerms& terms, double beta);
/// rewardFigures() [4] read on the host (one sync when they live on a GPU).
RewardStats rewardStatsFrom(const torch::Tensor& figures);
/// rewardStatsFrom(rewardFigures(terms, beta)).
RewardStats rewardStats(const DpoTerms& terms, double beta);

} // namespace d2dpo
