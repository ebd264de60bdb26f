// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo pairs` in several processes (torchrun's variables, or --nproc): each rank draws its share
// of the count from a seed of its own, and rank 0 stores what every rank drew, once. This file is
// the rule, torch-free: a rank's share and seed, a rank's draw as bytes for the rendezvous store,
// and the merge that keeps no pair twice (either way round), so two ranks that happen to draw the
// same pair store it once. Rank 0 alone writes, in one transaction: no pair is lost to a race and
// none is stored twice, on an SQLite file or a team's server alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "store/records.h"

namespace d2dpo {

/// How many of `count` pairs rank `rank` of `world` draws: the counts differ by at most one and
/// add up to `count`.
int64_t rankShareOf(int64_t count, int rank, int world);

/// The seed rank `rank` draws from: rank 0 keeps `seed` (one process's draw is rank 0's), the
/// others get streams of their own, far apart (SplitMix64 of the seed and the rank).
uint64_t rankSeedOf(uint64_t seed, int rank);

/// What one rank drew, or why it could not.
struct RankDraw {
    std::vector<ShownPair> pairs;
    std::vector<double> margins; ///< one per pair when chosen by margin, else empty
    std::string scoredBy;        ///< the model the margins are from
    int64_t candidates = 0;      ///< sequences drawn, or candidate pairs scored when chosen by margin
    double candidatesMeanAbs = 0; ///< chosen by margin: the candidates' mean |margin|
    std::string error;           ///< set when the rank failed; its pairs are then empty
};

std::string encodeRankDraw(const RankDraw& draw);
/// A rank's draw from its bytes; malformed bytes (a rank of another build) are an error.
Result<RankDraw> decodeRankDraw(const std::string& bytes);

/// Every rank's pairs, in rank order, with no pair twice (the same two sequences either way round):
/// the later copy is dropped, with its margin. Failed ranks add nothing.
struct MergedDraws {
    std::vector<ShownPair> pairs;
    std::vector<double> margins; ///< one per pair when every rank chose by margin, else empty
    std::string scoredBy;
    int64_t candidates = 0;     ///< over every rank
    double candidatesMeanAbs = 0; ///< over every rank's candidates
    double keptMeanAbs = 0;     ///< the merged pairs' mean |margin|
    int64_t repeated = 0;       ///< pairs dropped as already drawn
    std::vector<std::string> failures; ///< "rank 1: why", one per failed rank
};
MergedDraws mergeRankDraws(const std::vector<RankDraw>& draws);

} // namespace d2dpo
