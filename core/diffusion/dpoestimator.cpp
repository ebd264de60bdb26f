// SPDX-License-Identifier: GPL-3.0-or-later
#include "diffusion/dpoestimator.h"

#include <algorithm>

#include <torch/torch.h>

namespace d2dpo {

torch::Tensor drawTimes(int64_t rows, bool stratified, double low, double high, torch::Generator& generator,
                        const torch::TensorOptions& options)
{
    const auto unit = stratified ? ((torch::rand({1}, generator, options) + torch::arange(rows, options)) / double(rows))
                                       .remainder(1.0)
                                 : torch::rand({rows}, generator, options);
    return low == 0 ? unit * high : low + unit * (high - low);
}

CorruptedPairs corruptPairs(const NoiseProcess& noise, const torch::Tensor& winners, const torch::Tensor& losers,
                            const DpoConfig& config, torch::Generator& generator)
{
    const int64_t repeats = int64_t(config.tSamplesPerPair) * config.vrpoSamples;
    const auto w = repeats > 1 ? winners.repeat({repeats, 1}) : winners;
    const auto l = repeats > 1 ? losers.repeat({repeats, 1}) : losers;
    CorruptedPairs out;
    out.draws = w.size(0);
    out.complementary = config.maskCoupling == "complementary";
    const auto real = torch::dtype(torch::kFloat).device(w.device());
    // With complements t stays in [eps, 1 - eps), so that 1 - t needs no capping either and each
    // draw's weight matches its mask exactly.
    const double low = out.complementary ? config.tEpsilon : 0.0;
    const auto t = drawTimes(out.draws, config.tSampling == "stratified", low, 1 - config.tEpsilon, generator, real);
    out.t = torch::cat({t, t}); // winner and loser share t
    out.x1 = torch::cat({w, l});
    // The corruption draw is NoiseProcess::corrupt's, kept so the complement can be taken.
    const auto select = torch::rand(out.x1.sizes(), generator, real).ge(out.t.unsqueeze(1));
    out.xt = noise.corruptWhere(out.x1, select, generator);
    if (out.complementary) {
        // The complement keeps what the first draw corrupted: a draw at time 1 - t.
        const auto complement = noise.corruptWhere(out.x1, select.logical_not(), generator);
        out.xt = torch::cat({out.xt, complement});
        out.t = torch::cat({out.t, (1 - out.t).clamp_max(1 - config.tEpsilon)});
        out.x1 = torch::cat({out.x1, out.x1});
    }
    return out;
}

DpoTerms dpoTermsFrom(const CorruptedPairs& pairs, const SequenceDivergences& rows, int64_t pairCount,
                      const DpoConfig& config)
{
    const int64_t r = pairs.draws;
    auto divergence = rows.divergence;
    auto nll = rows.nll;
    auto read = rows.positionsRead;
    if (pairs.complementary) {
        divergence = (divergence.slice(0, 0, 2 * r) + divergence.slice(0, 2 * r)) / 2;
        nll = nll.slice(0, 0, 2 * r) + nll.slice(0, 2 * r);
        read = read.slice(0, 0, 2 * r) + read.slice(0, 2 * r);
    }
    // [T, V, B]: the V inner draws are averaged inside the loss, the T outer ones are terms of it.
    const int64_t outer = config.tSamplesPerPair, inner = config.vrpoSamples;
    const auto perTerm = [&](const torch::Tensor& d) { return d.view({outer, inner, pairCount}).mean(1).reshape({-1}); };
    DpoTerms terms;
    terms.divergenceChosen = perTerm(divergence.slice(0, 0, r));
    terms.divergenceRejected = perTerm(divergence.slice(0, r, 2 * r));
    terms.loss = preferenceLoss(terms.divergenceChosen - terms.divergenceRejected, config.lossType, config.beta,
                                config.labelSmoothing)
                     .mean();
    // The winners' masked cross-entropy per position read (the pretraining loss on the winners).
    terms.nll = nll.slice(0, 0, r).sum() / read.slice(0, 0, r).sum().clamp_min(1);
    if (config.rpoAlpha > 0)
        terms.loss = terms.loss + config.rpoAlpha * terms.nll;
    return terms;
}

DpoTerms d2dpoLoss(Denoiser& policy, Denoiser& reference, const NoiseProcess& noise, const torch::Tensor& winners,
                   const torch::Tensor& losers, const DpoConfig& config, torch::Generator& generator)
{
    const CorruptedPairs pairs = corruptPairs(noise, winners, losers, config, generator);
    const SequenceDivergences rows = pairs.xt.is_cpu()
                                         ? divergencesAtPositions(policy, reference, noise, pairs.x1, pairs.xt, pairs.t)
                                         : divergencesAllPositions(policy, reference, noise, pairs.x1, pairs.xt, pairs.t);
    return dpoTermsFrom(pairs, rows, winners.size(0), config);
}

} // namespace d2dpo
