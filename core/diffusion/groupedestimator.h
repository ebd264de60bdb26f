// SPDX-License-Identifier: GPL-3.0-or-later
// g-DPO's grouped scoring (Cradle, NeurIPS 2025) for D2-DPO: sequences that differ only inside a
// small set of positions U (their group's union mask) share every other token, so one corrupted
// sequence per group and draw scores them all. Each draw masks all of U and, outside it, each
// position with probability 1 - t as usual; x_t is then the same for every member, one forward pass
// of each model gives the log-ratios at U for all of them, and a pair's margin inside the group is
//   beta (1 + eta t) sum_{d in U} [log-ratio(x_a^d) - log-ratio(x_b^d)],
// log-ratio = log p_theta - log p_ref at x_t. The masked positions outside U hold the same token for
// both members and cancel exactly; a position of U, masked with probability 1 instead of 1 - t,
// takes the weight (1 - t) w(t) = 1 + eta t in place of w(t) (masking noise's rate factor), so each
// U term is weighted as the paper's estimator weights a masked position. What changes is the
// context: the rest of U is masked too (g-DPO's approximation). A batch of B pairs costs one row per
// group in it instead of 2 B: the speed-up `d2dpo bench-grouped` measures.
#pragma once

#include <string>

#include <torch/types.h>

#include "base/config.h"
#include "diffusion/losses.h"

namespace d2dpo {

/// Preference pairs inside groups: the groups' distinct sequences, each group's union mask, and
/// each pair as two member indices of one group.
struct PairGroups {
    torch::Tensor members;      ///< [K, D] int64
    torch::Tensor memberGroup;  ///< [K] int64: the group of each member
    torch::Tensor unionMask;    ///< [G, D] bool: where the group's members differ
    torch::Tensor templates;    ///< [G, D] int64: a member of each group (all agree outside the union)
    torch::Tensor winners;      ///< [P] int64 member indices
    torch::Tensor losers;       ///< [P] int64 member indices (of the winner's group)
};

/// The groups of `winners`, `losers` [P, D] int64: sequences linked by a pair are in one group
/// (connected components); `maxUnion`: refused (an error naming the largest union) when a group's
/// union mask holds more positions, where masking all of it would leave too little context.
struct GroupedPairs {
    PairGroups groups;
    int64_t largestUnion = 0;
    std::string error; ///< set when the pairs cannot be scored in groups
};
GroupedPairs groupPairs(const torch::Tensor& winners, const torch::Tensor& losers, int64_t maxUnion);

/// The widest union mask grouped scoring takes for sequences of `length`: a quarter of them, at
/// least 8 (g-DPO's clusters differ at a few positions; masking more leaves the model little context).
inline int64_t kGroupedMaxUnion(int64_t length) { return length / 4 > 8 ? length / 4 : 8; }

/// The grouped D2-DPO loss of the pairs `batch` [B] (indices into groups.winners) on masking noise:
/// tSamplesPerPair draws per group, the loss as preferenceLoss() on each pair's margin, averaged.
/// divergenceChosen/Rejected are the U terms, [B] (averaged over the draws). VRPO, complementary
/// masks and rpo_alpha are not defined here: refused.
DpoTerms groupedD2dpoLoss(Denoiser& policy, Denoiser& reference, const NoiseProcess& noise, const PairGroups& groups,
                          const torch::Tensor& batch, const DpoConfig& config, torch::Generator& generator);

} // namespace d2dpo
