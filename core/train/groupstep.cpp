// SPDX-License-Identifier: GPL-3.0-or-later
#include "train/groupstep.h"

#include <chrono>

#include <torch/torch.h>

namespace d2dpo {

namespace {

/// How long the other ranks wait for rank 0 to say whether it has Adam's state: it reads the
/// state from disk first (1.2 GB at 150M).
constexpr std::chrono::seconds kStateWait{600};

std::vector<torch::Tensor> parametersAndBuffers(Denoiser& model)
{
    std::vector<torch::Tensor> tensors = model->parameters();
    for (const auto& buffer : model->named_buffers())
        tensors.push_back(buffer.value());
    return tensors;
}

/// Adam's state of `parameter`, made empty (step 0, zero moments) where there is none: what
/// torch::optim::Adam makes at its first step, so a rank that makes it early steps alike.
torch::optim::AdamParamState& stateOf(torch::optim::Adam& adam, const torch::Tensor& parameter)
{
    auto& states = adam.state();
    const auto key = adamStateKey<std::decay_t<decltype(states)>::key_type>(parameter.unsafeGetTensorImpl());
    auto found = states.find(key);
    if (found == states.end()) {
        auto state = std::make_unique<torch::optim::AdamParamState>();
        state->step(0);
        state->exp_avg(torch::zeros_like(parameter, torch::MemoryFormat::Preserve));
        state->exp_avg_sq(torch::zeros_like(parameter, torch::MemoryFormat::Preserve));
        found = states.emplace(key, std::move(state)).first;
    }
    return static_cast<torch::optim::AdamParamState&>(*found->second);
}

} // namespace

void shareStartingPoint(TrainingGroup& group, Denoiser& policy, Denoiser& reference, FusedAdam& optimizer)
{
    torch::NoGradGuard noGrad;
    // Through the store first: the others wait here while rank 0 reads Adam's state from disk.
    const bool mainHasState = group.shareFromMain(optimizer.state().empty() ? "fresh" : "resumed", kStateWait) ==
                              "resumed";
    std::vector<torch::Tensor> weights = parametersAndBuffers(policy);
    for (const auto& tensor : parametersAndBuffers(reference))
        weights.push_back(tensor);
    group.broadcastFromMain(weights);
    if (!mainHasState)
        return;
    std::vector<torch::Tensor> moments;
    std::vector<torch::optim::AdamParamState*> states;
    for (auto& paramGroup : optimizer.param_groups())
        for (const auto& parameter : paramGroup.params()) {
            auto& state = stateOf(optimizer, parameter);
            states.push_back(&state);
            moments.push_back(state.exp_avg());
            moments.push_back(state.exp_avg_sq());
        }
    auto steps = torch::empty({int64_t(states.size())}, torch::kLong);
    for (size_t k = 0; k < states.size(); ++k)
        steps[int64_t(k)] = states[k]->step();
    moments.push_back(steps);
    group.broadcastFromMain(moments);
    for (size_t k = 0; k < states.size(); ++k)
        states[k]->step(steps[int64_t(k)].item<int64_t>());
}

GroupStepFigures sumStepOverGroup(TrainingGroup& group, const std::vector<torch::Tensor>& parameters,
                                  const torch::Tensor& loss, const torch::Tensor& rewards, bool stopAsked)
{
    torch::NoGradGuard noGrad;
    // One small exchange of figures in double: [loss, 4 rewards, stop, one "has a gradient" per parameter].
    const int64_t head = 6;
    auto figures = torch::zeros({head + int64_t(parameters.size())}, torch::kDouble);
    figures[0] = loss.detach().to(torch::kCPU, torch::kDouble).reshape({});
    if (rewards.defined())
        figures.narrow(0, 1, 4).copy_(rewards.detach().to(torch::kCPU, torch::kDouble));
    figures[5] = stopAsked ? 1.0 : 0.0;
    std::vector<torch::Tensor> tensors{figures};
    for (size_t k = 0; k < parameters.size(); ++k) {
        torch::Tensor parameter = parameters[k];
        if (parameter.grad().defined()) {
            figures[head + int64_t(k)] = 1.0;
        } else {
            parameter.mutable_grad() = torch::zeros_like(parameter, torch::MemoryFormat::Contiguous);
        }
        tensors.push_back(parameter.grad());
    }
    group.allReduceSum(tensors);
    for (size_t k = 0; k < parameters.size(); ++k)
        if (figures[head + int64_t(k)].item<double>() == 0)
            torch::Tensor(parameters[k]).mutable_grad().reset();
    GroupStepFigures out;
    const auto device = loss.device();
    out.loss = figures[0].to(device, loss.scalar_type());
    if (rewards.defined())
        out.rewards = (figures.narrow(0, 1, 4) / double(group.size())).to(device, rewards.scalar_type());
    out.stopAsked = figures[5].item<double>() > 0;
    return out;
}

} // namespace d2dpo
