// SPDX-License-Identifier: GPL-3.0-or-later
// What a data-parallel D2-DPO run exchanges, on top of distributed/traininggroup.h: rank 0's
// starting point (weights and Adam's state) before the first step, and after each rank's backward
// pass on its share of the batch the batch's gradients, loss and reward figures, and whether any
// rank was asked to stop. Every rank then holds the same numbers and takes the same Adam step.
#pragma once

#include <vector>

#include <torch/types.h>

#include "distributed/traininggroup.h"
#include "kernels/fusedadam.h"
#include "model/denoiser.h"

namespace d2dpo {

/// Rank 0's parameters and buffers of the policy and the reference on every rank (a resumed run's
/// weights, adapters, or a model file that differs between machines), then its Adam state: when
/// rank 0 has one (a resumed run), every rank gets its moments and step counts.
void shareStartingPoint(TrainingGroup& group, Denoiser& policy, Denoiser& reference, FusedAdam& optimizer);

/// One step's figures once every rank's share is summed.
struct GroupStepFigures {
    torch::Tensor loss;    ///< [] the batch's loss (the sum of the shares' parts)
    torch::Tensor rewards; ///< [4] the batch's reward figures, when every rank gave its share's
    bool stopAsked = false; ///< a rank was asked to stop: every rank stops after this step
};

/// Sums the gradients of `parameters` over the group (bucketed; see TrainingGroup::allReduceSum),
/// with `loss` (the share's part), `rewards` (the share's figures, or undefined) and this rank's
/// stop request in the same exchange. A parameter no rank gave a gradient keeps none (Adam leaves
/// it as one process would); one that only some ranks gave one gets the sum of those.
GroupStepFigures sumStepOverGroup(TrainingGroup& group, const std::vector<torch::Tensor>& parameters,
                                  const torch::Tensor& loss, const torch::Tensor& rewards, bool stopAsked);

} // namespace d2dpo
