// SPDX-License-Identifier: GPL-3.0-or-later
// Preference pairs from measured sequences without enumerating all n² of them:
// - Margin: random pairs whose values differ by more than the noise (k times the pair's combined
//   spread, and a fixed margin), drawn up to a budget;
// - UnionMaskClusters (g-DPO, Cradle 2025): sequences grouped so that each group differs from the
//   family's consensus at few positions (a small union mask), pairs only inside a group;
// - BestAgainstRest: the best share of sequences, each against random others.
// The winner of a pair is the better by the assay's direction; the same seed gives the same pairs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "assays/measuredsequences.h"
#include "base/result.h"

namespace d2dpo {

/// How pairs are chosen among measured sequences (see the top of this file).
enum class PairStrategy { Margin, UnionMaskClusters, BestAgainstRest };

/// How many positions a cluster's union mask may hold beyond its seed's own mask.
inline constexpr size_t kUnionMaskSlack = 2;

/// What makes a pair and how many: the strategy, the noise margin, the budget and the seed.
struct MeasuredPairOptions {
    PairStrategy strategy = PairStrategy::Margin;
    AssayDirection direction = AssayDirection::HigherIsBetter;
    double k = 1.0;             ///< a pair counts when |a - b| > max(fixedMargin, k sqrt(spread_a² + spread_b²))
    double fixedMargin = 0.0;
    size_t budget = 10000;      ///< at most this many pairs
    uint64_t seed = 1;          ///< std::mt19937_64's: the same seed gives the same pairs
    double bestShare = 0.1;     ///< BestAgainstRest: the top share (at least one sequence), in (0, 1]
    size_t maxClusterSize = 64; ///< UnionMaskClusters: at least 2
};

/// One pair, as indices into the sequences given.
struct MeasuredPair {
    size_t winner = 0, loser = 0; ///< the winner is the better by the assay's direction
};

/// The pairs a strategy made, and what a user is told about them.
struct MeasuredPairSet {
    std::vector<MeasuredPair> pairs; ///< none twice (in either order), at most the budget
    size_t sequencesUsed = 0;        ///< distinct sequences in the pairs
    /// The pairs the strategy chose from, an exact count each (the description says which):
    /// Margin: those past the fixed margin (some of which the spread rule turns away);
    /// UnionMaskClusters: those inside clusters that pass the whole margin rule;
    /// BestAgainstRest: each of the best with each of the rest, before the margin.
    size_t candidates = 0;
    std::string description; ///< how they were made, for the user
};

/// The pairs, or why none: fewer than 2 sequences, options out of range, or no pair passing the
/// margin (the message names the largest difference found and the margin it faced).
Result<MeasuredPairSet> makeMeasuredPairs(const std::vector<MeasuredSequence>& sequences,
                                          const MeasuredPairOptions& options);

/// g-DPO's groups, as indices into `sequences`: sequences of one length only; a sequence's mask is
/// the positions where it differs from its length's consensus (the most common symbol at each
/// position); sorted by mask, each group grows from its seed (its first member) while the union
/// of its members' masks stays within the seed's mask size plus kUnionMaskSlack and the group
/// within `maxClusterSize`. Every sequence is in exactly one group; deterministic.
std::vector<std::vector<size_t>> unionMaskClusters(const std::vector<MeasuredSequence>& sequences,
                                                   size_t maxClusterSize);

} // namespace d2dpo
