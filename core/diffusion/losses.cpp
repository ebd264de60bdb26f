// SPDX-License-Identifier: GPL-3.0-or-later
#include "diffusion/losses.h"

#include <algorithm>

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
    return {loss, dChosen, dRejected};
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

DpoTerms d2dpoTermsAllPositions(Denoiser& policy, Denoiser& reference, const NoiseProcess& noise,
                                const torch::Tensor& x1, const torch::Tensor& xt, const torch::Tensor& t, double beta)
{
    const int64_t rows = x1.size(0) / 2;
    const auto logpTheta = torch::log_softmax(policy->forward(xt, t), -1); // [2R, D, S]
    torch::Tensor logpRef;
    {
        c10::InferenceMode inference; // see d2dpoTermsAtPositions
        logpRef = torch::log_softmax(reference->forward(xt, t), -1);
    }
    logpRef = logpRef.clone();
    const auto divergence = noise.divergence(xt, x1, logpTheta, logpRef, t); // [2R]
    return dpoLossFromDivergences(divergence.slice(0, 0, rows), divergence.slice(0, rows), beta);
}

DpoTerms d2dpoTermsAtPositions(Denoiser& policy, Denoiser& reference, const NoiseProcess& noise,
                               const torch::Tensor& x1, const torch::Tensor& xt, const torch::Tensor& t, double beta)
{
    const int64_t rows = x1.size(0) / 2;
    const auto positions = noise.positionsRead(xt);                                     // [P]
    const auto logpTheta = torch::log_softmax(policy->forwardAt(xt, t, positions), -1); // [P, S]
    torch::Tensor logpRef;
    {
        // No autograd bookkeeping at all for the frozen reference (no version counters, no views
        // tracked). Its output is an inference tensor, which autograd may not save: the clone
        // below is a normal tensor (a [P, S] copy, small next to the forward it replaces).
        c10::InferenceMode inference;
        logpRef = torch::log_softmax(reference->forwardAt(xt, t, positions), -1);
    }
    logpRef = logpRef.clone();
    const auto divergence = noise.divergenceAt(xt, x1, positions, logpTheta, logpRef, t); // [2R]
    return dpoLossFromDivergences(divergence.slice(0, 0, rows), divergence.slice(0, rows), beta);
}

DpoTerms d2dpoLoss(Denoiser& policy, Denoiser& reference, const NoiseProcess& noise, const torch::Tensor& winners,
                   const torch::Tensor& losers, double beta, double tEpsilon, int tSamples,
                   torch::Generator& generator)
{
    const auto w = tSamples > 1 ? winners.repeat({tSamples, 1}) : winners;
    const auto l = tSamples > 1 ? losers.repeat({tSamples, 1}) : losers;
    const int64_t rows = w.size(0);

    const auto t = torch::rand({rows}, generator, torch::dtype(torch::kFloat).device(w.device())) * (1 - tEpsilon);
    const auto tBoth = torch::cat({t, t});
    const auto x1 = torch::cat({w, l});                       // [2R, D]: winners then losers
    const auto xt = noise.corrupt(x1, tBoth, generator);
    // On the CPU both models run only at the positions the divergence reads. On a GPU, finding
    // those positions (a nonzero()) would wait for the device every step: there the models run
    // on every position, in fixed shapes (the same value, tested).
    if (xt.is_cpu())
        return d2dpoTermsAtPositions(policy, reference, noise, x1, xt, tBoth, beta);
    return d2dpoTermsAllPositions(policy, reference, noise, x1, xt, tBoth, beta);
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
