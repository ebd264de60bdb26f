// SPDX-License-Identifier: GPL-3.0-or-later
// The training objectives: the pretraining cross-entropy on the positions the process reads, the
// D2-DPO divergences in each process's closed form and in the general rate-matrix form (paper eq.
// for D^theta_ref; tests prove the two agree), and the preference losses on their margin. How the
// divergences are estimated for a batch of pairs (the draws of t and masks) is dpoestimator.h.
#pragma once

#include <string>

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
/// D(x_t^l|x_1^l) summed over positions (and averaged over the draws the estimator averages
/// inside the loss), [B]; rewards are beta times them.
struct DpoTerms {
    torch::Tensor loss;               ///< scalar: the mean preference loss (+ rpo_alpha times the winners' nll)
    torch::Tensor divergenceChosen;   ///< [B]
    torch::Tensor divergenceRejected; ///< [B]
    torch::Tensor nll;                ///< scalar: the winners' masked cross-entropy (nll_loss); undefined unless asked for
};

/// -log sigmoid(beta (dChosen - dRejected)), averaged: dChosen, dRejected [B] -> DpoTerms.
DpoTerms dpoLossFromDivergences(const torch::Tensor& dChosen, const torch::Tensor& dRejected, double beta);

/// The preference loss on the diffusion margin h = D_w - D_l, per pair, named as TRL's loss_type:
///   sigmoid  -(1 - e) log sigmoid(beta h) - e log sigmoid(-beta h)   (e > 0: conservative DPO)
///   robust   (-(1 - e) log sigmoid(beta h) + e log sigmoid(-beta h)) / (1 - 2e)   (e: the flip rate)
///   hinge    max(0, 1 - beta h)
///   ipo      (h - 1/(2 beta))^2
/// with e the label smoothing. h [B] -> [B].
torch::Tensor preferenceLoss(const torch::Tensor& margin, const std::string& lossType, double beta,
                             double labelSmoothing);

/// General rate-matrix form of sum_d D^{theta,d}_ref: sum over j != x_t of
/// R^q log(R^theta / R^ref) + R^ref - R^theta. x_t [B, D] int64; rates [B, D, V] -> [B].
torch::Tensor rateMatrixDivergence(const torch::Tensor& xt, const torch::Tensor& rateQ, const torch::Tensor& rateTheta,
                                   const torch::Tensor& rateRef);

/// The same divergence as NoiseProcess::divergence, computed through the process's rates.
torch::Tensor generalDivergence(const NoiseProcess& noise, const torch::Tensor& xt, const torch::Tensor& x1,
                                const torch::Tensor& logpTheta, const torch::Tensor& logpRef, const torch::Tensor& t);

/// Per corrupted sequence: the divergence D^theta_ref(x_t | x_1) [rows], and the policy's negative
/// log-likelihood of x_1 summed over the positions the divergence reads [rows] with their count.
struct SequenceDivergences {
    torch::Tensor divergence;
    torch::Tensor nll;
    torch::Tensor positionsRead;
};

/// Both models on corrupted sequences x1, xt [rows, D] int64, t [rows], on every position (fixed
/// shapes, no host sync: the GPU path) ...
SequenceDivergences divergencesAllPositions(Denoiser& policy, Denoiser& reference, const NoiseProcess& noise,
                                            const torch::Tensor& x1, const torch::Tensor& xt, const torch::Tensor& t);
/// ... or only at the positions the divergence reads (less work; the CPU path). Equal values.
SequenceDivergences divergencesAtPositions(Denoiser& policy, Denoiser& reference, const NoiseProcess& noise,
                                           const torch::Tensor& x1, const torch::Tensor& xt, const torch::Tensor& t);

/// rewards/chosen, rejected, margins, accuracies from a batch's terms, as a [4] tensor on the
/// terms' device (nothing is read on the host).
torch::Tensor rewardFigures(const DpoTerms& terms, double beta);
/// rewardFigures() [4] read on the host (one sync when they live on a GPU).
RewardStats rewardStatsFrom(const torch::Tensor& figures);
/// rewardStatsFrom(rewardFigures(terms, beta)).
RewardStats rewardStats(const DpoTerms& terms, double beta);

} // namespace d2dpo
