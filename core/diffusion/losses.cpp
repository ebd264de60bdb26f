// SPDX-License-Identifier: GPL-3.0-or-later
#include "diffusion/losses.h"

#include <algorithm>
#include <stdexcept>

#include <torch/torch.h>

#include "model/flatpositions.h"

namespace d2dpo {

torch::Tensor pretrainLoss(Denoiser& model, const NoiseProcess& noise, const torch::Tensor& x1,
                           torch::Generator& generator, bool elboWeighting)
{
    const auto floatOptions = torch::dtype(torch::kFloat).device(x1.device());
    const auto t = torch::rand({x1.size(0)}, generator, floatOptions);
    const auto xt = noise.corrupt(x1, t, generator);
    // Only the positions the process reads (masked ones) enter the loss, so only they are computed.
    const auto positions = noise.positionsRead(xt);                                      // [P]
    const auto nll = torch::nn::functional::cross_entropy(
        model->forwardAt(xt, t, positions), x1.reshape({-1}).index_select(0, positions),
        torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));      // [P]
    const auto maskedCount = std::max<int64_t>(1, positions.size(0));
    if (!elboWeighting)
        return nll.sum() / double(maskedCount);
    const auto weight = 1 / (1 - t).clamp_min(1e-3).index_select(0, sequenceOfPosition(positions, x1.size(1)));
    return (nll * weight).sum() / double(maskedCount);
}

DpoTerms dpoLossFromDivergences(const torch::Tensor& dChosen, const torch::Tensor& dRejected, double beta)
{
    const auto loss = -torch::nn::functional::logsigmoid(beta * (dChosen - dRejected)).mean();
    return {loss, dChosen, dRejected, {}};
}

torch::Tensor rateMatrixDivergence(const torch::Tensor& xt, const torch::Tensor& rateQ, const torch::Tensor& rateTheta,
                                   const torch::Tensor& rateRef)
{
    const auto offDiagonal = 1 - torch::one_hot(xt, rateQ.size(-1)).to(rateQ.scalar_type());
    // R^q log(R^theta / R^ref) only where R^q > 0 (elsewhere it is 0 whatever the rates are).
    const auto active = rateQ.gt(0);
    const auto safeTheta = torch::where(active, rateTheta, torch::ones_like(rateTheta));
    const auto safeRef = torch::where(active, rateRef, torch::ones_like(rateRef));
    const auto logTerm = rateQ * (torch::log(safeTheta) - torch::log(safeRef));
    return ((logTerm + rateRef - rateTheta) * offDiagonal).sum({1, 2});
}

torch::Tensor generalDivergence(const NoiseProcess& noise, const torch::Tensor& xt, const torch::Tensor& x1,
                                const torch::Tensor& logpTheta, const torch::Tensor& logpRef, const torch::Tensor& t)
{
    return rateMatrixDivergence(xt, noise.conditionalRate(xt, x1, t), noise.modelRate(xt, logpTheta.exp(), t),
                                noise.modelRate(xt, logpRef.exp(), t));
}

namespace {

/// The frozen reference's log-probabilities, without any autograd bookkeeping (no version
/// counters, no views tracked). Its output is an inference tensor, which autograd may not save:
/// the clone is a normal tensor (a copy, small next to the forward it replaces).
template <typename Forward> torch::Tensor referenceLogProbabilities(Forward forward)
{
    torch::Tensor logpRef;
    {
        c10::InferenceMode inference;
        logpRef = torch::log_softmax(forward(), -1);
    }
    return logpRef.clone();
}

} // namespace

SequenceDivergences divergencesAllPositions(Denoiser& policy, Denoiser& reference, const NoiseProcess& noise,
                                            const torch::Tensor& x1, const torch::Tensor& xt, const torch::Tensor& t)
{
    const auto logpTheta = torch::log_softmax(policy->forward(xt, t), -1); // [rows, D, S]
    const auto logpRef = referenceLogProbabilities([&] { return reference->forward(xt, t); });
    const auto read = noise.readMask(xt).to(logpTheta.scalar_type());     // [rows, D]
    const auto nll = -(logpTheta.gather(-1, x1.unsqueeze(-1)).squeeze(-1) * read).sum(1);
    return {noise.divergence(xt, x1, logpTheta, logpRef, t), nll, read.sum(1)};
}

SequenceDivergences divergencesAtPositions(Denoiser& policy, Denoiser& reference, const NoiseProcess& noise,
                                           const torch::Tensor& x1, const torch::Tensor& xt, const torch::Tensor& t)
{
    const auto positions = noise.positionsRead(xt);                                     // [P]
    const auto logpTheta = torch::log_softmax(policy->forwardAt(xt, t, positions), -1); // [P, S]
    const auto logpRef = referenceLogProbabilities([&] { return reference->forwardAt(xt, t, positions); });
    const auto sequence = sequenceOfPosition(positions, xt.size(1));
    const auto clean = x1.reshape({-1}).index_select(0, positions).unsqueeze(1);
    const auto zeros = torch::zeros({xt.size(0)}, logpTheta.options());
    const auto nll = zeros.index_add(0, sequence, -logpTheta.gather(1, clean).squeeze(1));
    const auto count = zeros.index_add(0, sequence, torch::ones({positions.size(0)}, logpTheta.options()));
    return {noise.divergenceAt(xt, x1, positions, logpTheta, logpRef, t), nll, count};
}

torch::Tensor preferenceLoss(const torch::Tensor& margin, const std::string& lossType, double beta,
                             double labelSmoothing)
{
    namespace F = torch::nn::functional;
    const double e = labelSmoothing;
    if (lossType == "ipo")
        return (margin - 1 / (2 * beta)).pow(2);
    if (lossType == "hinge")
        return torch::relu(1 - beta * margin);
    const auto logitsFor = F::logsigmoid(beta * margin);
    const auto logitsAgainst = F::logsigmoid(-beta * margin);
    if (lossType == "robust")
        return (-(1 - e) * logitsFor + e * logitsAgainst) / (1 - 2 * e);
    if (lossType != "sigmoid")
        throw std::invalid_argument("unknown loss type '" + lossType + "'");
    return -(1 - e) * logitsFor - e * logitsAgainst;
}

torch::Tensor rewardFigures(const DpoTerms& terms, double beta)
{
    torch::NoGradGuard noGrad;
    const auto chosen = terms.divergenceChosen.detach() * beta;
    const auto rejected = terms.divergenceRejected.detach() * beta;
    const auto margins = chosen - rejected;
    return torch::stack({chosen.mean(), rejected.mean(), margins.mean(), margins.gt(0).to(torch::kFloat).mean()});
}

RewardStats rewardStatsFrom(const torch::Tensor& figures)
{
    const auto stats = figures.to(torch::kCPU, torch::kDouble).contiguous();
    const double* v = stats.data_ptr<double>();
    return {v[0], v[1], v[2], v[3]};
}

RewardStats rewardStats(const DpoTerms& terms, double beta) { return rewardStatsFrom(rewardFigures(terms, beta)); }

} // namespace d2dpo
