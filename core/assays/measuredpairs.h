// SPDX-License-Identifier: GPL-3.0-or-later
// Preference pairs from measured sequences without enumerating all n² of them:
// - Margin: random pairs whose values differ by more than the noise (k times the pair's combined
//   spread, and a fixed margin), drawn up to a budget;
// - UnionMaskClusters (g-DPO, Cradle 2025): sequences grouped so that each group differs from the
//   family's consensus at few positions (a small union mask), pairs only inside a group;
// - BestAgainstRest: the best share of sequences, each against random others.
// The winner of a pair is the better by the assay's direction; the same seed gives the same pairs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "assays/measuredsequences.h"
#include "base/result.h"

namespace d2dpo {

enum class PairStrategy { Margin, UnionMaskClusters, BestAgainstRest };

struct MeasuredPairOptions {
    PairStrategy strategy = PairStrategy::Margin;
    AssayDirection direction = AssayDirection::HigherIsBetter;
    double k = 2.0;          ///< a pair counts when |a - b| > max(fixedMargin, k sqrt(spread_a² + spread_b²))
    double fixedMargin = 0.0;
    size_t budget = 10000;   ///< at most this many pairs
    uint64_t seed = 1;
    double bestShare = 0.1;  ///< BestAgainstRest: the top share (at least one sequence)
    size_t maxClusterSize = 64;
};

struct MeasuredPair {
    size_t winner = 0, loser = 0; ///< indices into the sequences given
};

struct MeasuredPairSet {
    std::vector<MeasuredPair> pairs;
    size_t sequencesUsed = 0; ///< distinct sequences in the pairs
    std::string description;  ///< how they were made, for the user
};

Result<MeasuredPairSet> makeMeasuredPairs(const std::vector<MeasuredSequence>& sequences,
                                          const MeasuredPairOptions& options);

/// g-DPO's groups: sequences of one length, each group's union of positions that differ from
/// the consensus kept small (at most its first member's plus two), at most `maxClusterSize` each.
std::vector<std::vector<size_t>> unionMaskClusters(const std::vector<MeasuredSequence>& sequences,
                                                   size_t maxClusterSize);

} // namespace d2dpo
