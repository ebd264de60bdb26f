// SPDX-License-Identifier: GPL-3.0-or-later
#include "labeling/rankpairs.h"

#include <cmath>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

namespace d2dpo {

int64_t rankShareOf(int64_t count, int rank, int world)
{
    // Rank r takes [r count / N, (r + 1) count / N): the remainder spread over the later ranks.
    return count * (rank + 1) / world - count * rank / world;
}

uint64_t rankSeedOf(uint64_t seed, int rank)
{
    if (rank == 0)
        return seed;
    // SplitMix64's finaliser over the seed and the rank: neighbouring ranks (and neighbouring
    // seeds) land on unrelated streams, unlike seed + rank, which would make rank 1 of seed s
    // draw what one process of seed s + 1 draws.
    uint64_t z = seed + 0x9E3779B97F4A7C15ULL * uint64_t(rank);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

std::string encodeRankDraw(const RankDraw& draw)
{
    nlohmann::json pairs = nlohmann::json::array();
    for (const ShownPair& p : draw.pairs)
        pairs.push_back({p.left, p.right, p.leftModelId, p.rightModelId, p.task});
    return nlohmann::json{{"pairs", pairs},
                          {"margins", draw.margins},
                          {"scored_by", draw.scoredBy},
                          {"candidates", draw.candidates},
                          {"candidates_mean_abs", draw.candidatesMeanAbs},
                          {"error", draw.error}}
        // Not UTF-8 (a path in another encoding, in an error): replaced, never a throw that
        // would take the rank down with its pairs.
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<RankDraw> decodeRankDraw(const std::string& bytes)
{
    try {
        const nlohmann::json j = nlohmann::json::parse(bytes);
        RankDraw draw;
        for (const nlohmann::json& p : j.at("pairs"))
            draw.pairs.push_back({0, p.at(0).get<std::string>(), p.at(1).get<std::string>(),
                                  p.at(2).get<std::string>(), p.at(3).get<std::string>(), p.at(4).get<std::string>()});
        draw.margins = j.at("margins").get<std::vector<double>>();
        draw.scoredBy = j.at("scored_by").get<std::string>();
        draw.candidates = j.at("candidates").get<int64_t>();
        draw.candidatesMeanAbs = j.at("candidates_mean_abs").get<double>();
        draw.error = j.at("error").get<std::string>();
        if (!draw.margins.empty() && draw.margins.size() != draw.pairs.size())
            return makeError("a rank's pairs came without a margin each");
        return draw;
    } catch (const nlohmann::json::exception& e) {
        return makeError(std::string("a rank's pairs could not be read: ") + e.what());
    }
}

MergedDraws mergeRankDraws(const std::vector<RankDraw>& draws)
{
    MergedDraws merged;
    bool everyMargin = true;
    for (const RankDraw& draw : draws)
        if (draw.error.empty() && draw.margins.empty() && !draw.pairs.empty())
            everyMargin = false;
    std::set<std::pair<std::string, std::string>> seen; // each pair as (smaller, larger) sequence
    for (size_t rank = 0; rank < draws.size(); ++rank) {
        const RankDraw& draw = draws[rank];
        if (!draw.error.empty()) {
            merged.failures.push_back("rank " + std::to_string(rank) + ": " + draw.error);
            continue;
        }
        merged.candidates += draw.candidates;
        merged.candidatesMeanAbs += draw.candidatesMeanAbs * double(draw.candidates);
        if (merged.scoredBy.empty())
            merged.scoredBy = draw.scoredBy;
        for (size_t i = 0; i < draw.pairs.size(); ++i) {
            const ShownPair& p = draw.pairs[i];
            const auto key = p.left < p.right ? std::make_pair(p.left, p.right) : std::make_pair(p.right, p.left);
            if (!seen.insert(key).second) {
                ++merged.repeated;
                continue;
            }
            merged.pairs.push_back(p);
            if (everyMargin && !draw.margins.empty())
                merged.margins.push_back(draw.margins[i]);
        }
    }
    if (!everyMargin || merged.margins.size() != merged.pairs.size())
        merged.margins.clear();
    if (merged.candidates > 0)
        merged.candidatesMeanAbs /= double(merged.candidates);
    for (double margin : merged.margins)
        merged.keptMeanAbs += std::abs(margin) / double(merged.margins.size());
    return merged;
}

} // namespace d2dpo
