// SPDX-License-Identifier: GPL-3.0-or-later
#include "diffusion/dpoestimator.h"
#include "diffusion/sampler.h"

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

namespace {

/// A batch's divergences per loss term [T B] and the winners' nll with its count of positions.
struct TermParts {
    torch::Tensor chosen, rejected, nll, read;
};

TermParts termParts(const CorruptedPairs& pairs, const SequenceDivergences& rows, int64_t pairCount,
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
    return {perTerm(divergence.slice(0, 0, r)), perTerm(divergence.slice(0, r, 2 * r)), nll.slice(0, 0, r).sum(),
            read.slice(0, 0, r).sum()};
}

torch::Tensor preferenceLosses(const TermParts& parts, const DpoConfig& config)
{
    return preferenceLoss(parts.chosen - parts.rejected, config.lossType, config.beta, config.labelSmoothing);
}

/// How many positions the winners' draws read in a corrupted batch: the nll's denominator.
torch::Tensor winnerPositionsRead(const NoiseProcess& noise, const CorruptedPairs& pairs)
{
    const auto perRow = noise.readMask(pairs.xt).sum(1);
    const int64_t r = pairs.draws;
    auto read = perRow.slice(0, 0, r).sum();
    if (pairs.complementary)
        read = read + perRow.slice(0, 2 * r, 3 * r).sum();
    return read;
}

} // namespace

DpoTerms dpoTermsFrom(const CorruptedPairs& pairs, const SequenceDivergences& rows, int64_t pairCount,
                      const DpoConfig& config)
{
    const TermParts parts = termParts(pairs, rows, pairCount, config);
    DpoTerms terms;
    terms.divergenceChosen = parts.chosen;
    terms.divergenceRejected = parts.rejected;
    terms.loss = preferenceLosses(parts, config).mean();
    // The winners' masked cross-entropy per position read (the pretraining loss on the winners).
    terms.nll = parts.nll / parts.read.clamp_min(1);
    if (config.rpoAlpha > 0)
        terms.loss = terms.loss + config.rpoAlpha * terms.nll;
    return terms;
}

namespace {

/// Both models on corrupted rows: on the CPU at the positions read, on a GPU in fixed shapes.
SequenceDivergences divergences(Denoiser& policy, Denoiser& reference, const NoiseProcess& noise,
                                const CorruptedPairs& pairs)
{
    samplerPass(); // a stop is heard between a step's pieces (diffusion/sampler.h's PassWatch)
    return pairs.xt.is_cpu() ? divergencesAtPositions(policy, reference, noise, pairs.x1, pairs.xt, pairs.t)
                             : divergencesAllPositions(policy, reference, noise, pairs.x1, pairs.xt, pairs.t);
}

} // namespace

DpoTerms d2dpoLoss(Denoiser& policy, Denoiser& reference, const NoiseProcess& noise, const torch::Tensor& winners,
                   const torch::Tensor& losers, const DpoConfig& config, torch::Generator& generator)
{
    const CorruptedPairs pairs = corruptPairs(noise, winners, losers, config, generator);
    const SequenceDivergences rows = divergences(policy, reference, noise, pairs);
    return dpoTermsFrom(pairs, rows, winners.size(0), config);
}

CorruptedPairs pairsSlice(const CorruptedPairs& all, int64_t pairCount, int64_t begin, int64_t end)
{
    // Row g B + b is pair b's row of group g (its draws, winner then loser, then the complements).
    const int64_t groups = all.x1.size(0) / pairCount;
    const auto options = torch::dtype(torch::kLong).device(all.x1.device());
    const auto rows = (torch::arange(groups, options).unsqueeze(1) * pairCount +
                       torch::arange(begin, end, options).unsqueeze(0))
                          .reshape({-1});
    CorruptedPairs slice;
    slice.x1 = all.x1.index_select(0, rows);
    slice.xt = all.xt.index_select(0, rows);
    slice.t = all.t.index_select(0, rows);
    slice.draws = all.draws / pairCount * (end - begin);
    slice.complementary = all.complementary;
    return slice;
}

DpoTerms d2dpoBackward(Denoiser& policy, Denoiser& reference, const NoiseProcess& noise, const torch::Tensor& winners,
                       const torch::Tensor& losers, const DpoConfig& config, torch::Generator& generator,
                       int64_t piecePairs, PairShare share)
{
    const int64_t pairCount = winners.size(0);
    const int64_t shareEnd = share.end < 0 ? pairCount : std::min(share.end, pairCount);
    const int64_t shareBegin = std::clamp<int64_t>(share.begin, 0, shareEnd);
    const int64_t piece = piecePairs <= 0 ? pairCount : std::min(piecePairs, pairCount);
    // Drawn for the whole batch on every share: the draws of pair b do not depend on who scores it.
    const CorruptedPairs all = corruptPairs(noise, winners, losers, config, generator);
    if (piece == pairCount && shareBegin == 0 && shareEnd == pairCount) {
        DpoTerms terms = dpoTermsFrom(all, divergences(policy, reference, noise, all), pairCount, config);
        samplerPass(); // ...and before the backward pass, two thirds of a step
        terms.loss.backward();
        terms.loss = terms.loss.detach();
        terms.divergenceChosen = terms.divergenceChosen.detach();
        terms.divergenceRejected = terms.divergenceRejected.detach();
        terms.nll = terms.nll.detach();
        return terms;
    }
    // The batch's loss is mean_i loss_i + alpha nll / read: each piece adds its sum of loss
    // terms over the batch's count of terms, and its winners' nll over the batch's positions read.
    const double termCount = double(pairCount) * config.tSamplesPerPair;
    const auto read = winnerPositionsRead(noise, all).to(torch::kFloat).clamp_min(1);
    std::vector<torch::Tensor> chosen, rejected;
    torch::Tensor loss, nll;
    for (int64_t begin = shareBegin; begin < shareEnd; begin += piece) {
        const int64_t end = std::min(begin + piece, shareEnd);
        const CorruptedPairs slice = pairsSlice(all, pairCount, begin, end);
        const TermParts parts = termParts(slice, divergences(policy, reference, noise, slice), end - begin, config);
        auto share = preferenceLosses(parts, config).sum() / termCount;
        if (config.rpoAlpha > 0)
            share = share + config.rpoAlpha * parts.nll / read;
        samplerPass();
        share.backward();
        loss = loss.defined() ? loss + share.detach() : share.detach();
        nll = nll.defined() ? nll + parts.nll.detach() : parts.nll.detach();
        chosen.push_back(parts.chosen.detach());
        rejected.push_back(parts.rejected.detach());
    }
    DpoTerms terms;
    terms.loss = loss;
    terms.divergenceChosen = torch::cat(chosen);
    terms.divergenceRejected = torch::cat(rejected);
    terms.nll = nll / read;
    return terms;
}

} // namespace d2dpo
