// SPDX-License-Identifier: GPL-3.0-or-later
#include "diffusion/groupedestimator.h"

#include <map>
#include <numeric>
#include <vector>

#include <torch/torch.h>

#include "diffusion/dpoestimator.h"
#include "diffusion/maskingnoise.h"

namespace d2dpo {

namespace {

int64_t rootOf(std::vector<int64_t>& parent, int64_t i)
{
    while (parent[size_t(i)] != i)
        i = parent[size_t(i)] = parent[size_t(parent[size_t(i)])];
    return i;
}

} // namespace

GroupedPairs groupPairs(const torch::Tensor& winners, const torch::Tensor& losers, int64_t maxUnion)
{
    TORCH_CHECK(winners.dim() == 2 && winners.sizes() == losers.sizes(), "pairs in groups need [P, D] winners and losers");
    GroupedPairs out;
    const auto w = winners.to(torch::kCPU, torch::kLong).contiguous(), l = losers.to(torch::kCPU, torch::kLong).contiguous();
    const int64_t pairs = w.size(0), length = w.size(1);
    // Distinct sequences, then the components the pairs link (union-find).
    std::map<std::vector<int64_t>, int64_t> index;
    std::vector<std::vector<int64_t>> members;
    const auto memberOf = [&](const int64_t* row) {
        std::vector<int64_t> key(row, row + length);
        const auto [it, added] = index.emplace(key, int64_t(members.size()));
        if (added)
            members.push_back(std::move(key));
        return it->second;
    };
    std::vector<int64_t> winner(static_cast<size_t>(pairs)), loser(static_cast<size_t>(pairs));
    for (int64_t p = 0; p < pairs; ++p) {
        winner[size_t(p)] = memberOf(w.data_ptr<int64_t>() + p * length);
        loser[size_t(p)] = memberOf(l.data_ptr<int64_t>() + p * length);
    }
    std::vector<int64_t> parent(members.size());
    std::iota(parent.begin(), parent.end(), int64_t(0));
    for (int64_t p = 0; p < pairs; ++p)
        parent[size_t(rootOf(parent, winner[size_t(p)]))] = rootOf(parent, loser[size_t(p)]);
    std::map<int64_t, int64_t> groupOfRoot;
    std::vector<int64_t> memberGroup(members.size());
    for (size_t m = 0; m < members.size(); ++m)
        memberGroup[m] = groupOfRoot.emplace(rootOf(parent, int64_t(m)), int64_t(groupOfRoot.size())).first->second;
    const int64_t groups = int64_t(groupOfRoot.size());
    auto templates = torch::full({groups, length}, -1, torch::kLong);
    auto unionMask = torch::zeros({groups, length}, torch::kBool);
    auto* first = templates.data_ptr<int64_t>();
    auto* differs = unionMask.data_ptr<bool>();
    for (size_t m = 0; m < members.size(); ++m) {
        int64_t* row = first + memberGroup[m] * length;
        bool* mask = differs + memberGroup[m] * length;
        for (int64_t d = 0; d < length; ++d) {
            if (row[d] < 0)
                row[d] = members[m][size_t(d)];
            else if (row[d] != members[m][size_t(d)])
                mask[d] = true;
        }
    }
    out.largestUnion = groups > 0 ? unionMask.sum(1).max().item<int64_t>() : 0;
    if (out.largestUnion > maxUnion) {
        out.error = "a group of sequences linked by pairs differs at " + std::to_string(out.largestUnion) +
                    " positions, more than " + std::to_string(maxUnion) + ": masking them all would leave too "
                    "little context, so these pairs cannot be scored in groups (g-DPO's clusters, --strategy "
                    "clusters, keep groups small)";
        return out;
    }
    auto flat = torch::empty({int64_t(members.size()), length}, torch::kLong);
    for (size_t m = 0; m < members.size(); ++m)
        std::copy(members[m].begin(), members[m].end(), flat.data_ptr<int64_t>() + int64_t(m) * length);
    out.groups.members = flat;
    out.groups.memberGroup = torch::tensor(memberGroup, torch::kLong);
    out.groups.unionMask = unionMask;
    out.groups.templates = templates;
    out.groups.winners = torch::tensor(winner, torch::kLong);
    out.groups.losers = torch::tensor(loser, torch::kLong);
    return out;
}

DpoTerms groupedD2dpoLoss(Denoiser& policy, Denoiser& reference, const NoiseProcess& noise, const PairGroups& groups,
                          const torch::Tensor& batch, const DpoConfig& config, torch::Generator& generator)
{
    const auto* masking = dynamic_cast<const MaskingNoise*>(&noise);
    TORCH_CHECK(masking, "grouped scoring is written for masking noise; this model's noise is ", noise.name());
    TORCH_CHECK(config.vrpoSamples == 1 && config.maskCoupling != "complementary" && config.rpoAlpha == 0,
                "grouped scoring draws one masked context per group: VRPO samples, complementary masks and "
                "rpo_alpha are not defined for it");
    const int64_t draws = config.tSamplesPerPair, pairs = batch.size(0), length = groups.members.size(1);
    const auto winners = groups.winners.index_select(0, batch), losers = groups.losers.index_select(0, batch);
    // The groups in the batch, each once: one corrupted row per group and draw.
    const auto [present, place] = at::_unique(groups.memberGroup.index_select(0, winners), true, true);
    const int64_t rows = present.size(0) * draws;
    const auto rowGroup = present.repeat({draws});                                  // row k G + u
    const auto real = torch::dtype(torch::kFloat).device(groups.members.device());
    const auto t = drawTimes(rows, config.tSampling == "stratified", 0.0, 1 - config.tEpsilon, generator, real);
    const auto inUnion = groups.unionMask.index_select(0, rowGroup);                // [R, D]
    const auto select = torch::rand({rows, length}, generator, real).ge(t.unsqueeze(1)).logical_or(inUnion);
    const auto xt = noise.corruptWhere(groups.templates.index_select(0, rowGroup), select, generator);
    const auto logpTheta = torch::log_softmax(policy->forward(xt, t).to(torch::kFloat), -1); // [R, D, S]
    torch::Tensor logpRef;
    {
        torch::NoGradGuard noGrad;
        logpRef = torch::log_softmax(reference->forward(xt, t).to(torch::kFloat), -1);
    }
    const auto logRatio = logpTheta - logpRef;
    // Each pair's row for each draw (draw-major, as corruptPairs lays rows out).
    const auto pairRow = (torch::arange(draws, place.options()).unsqueeze(1) * present.size(0) + place.unsqueeze(0))
                             .reshape({-1});                                        // [T B]
    const auto ratios = logRatio.index_select(0, pairRow);                          // [T B, D, S]
    const auto weight = inUnion.index_select(0, pairRow).to(torch::kFloat);          // [T B, D]
    const auto sum = [&](const torch::Tensor& members) {
        const auto tokens = groups.members.index_select(0, members).repeat({draws, 1}).unsqueeze(-1);
        return (ratios.gather(-1, tokens).squeeze(-1) * weight).sum(1);             // [T B]
    };
    const auto factor = 1 + masking->eta() * t.index_select(0, pairRow);
    const auto chosen = factor * sum(winners), rejected = factor * sum(losers);
    DpoTerms terms;
    terms.loss = preferenceLoss(chosen - rejected, config.lossType, config.beta, config.labelSmoothing).mean();
    terms.divergenceChosen = chosen.view({draws, pairs}).mean(0);
    terms.divergenceRejected = rejected.view({draws, pairs}).mean(0);
    return terms;
}

} // namespace d2dpo
