// SPDX-License-Identifier: GPL-3.0-or-later
// Preference pairs from a stored assay: its values summarised per sequence (a sequence measured
// twice by its mean and spread) and paired by a strategy (assays/measuredpairs.h), the winner the
// better by the assay's direction. What `d2dpo measurements pairs` shows and what a D2-DPO run on
// measurements trains on, the same pairs for the same seed. Torch-free header.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "assays/measuredpairs.h"
#include "assays/measuredsequences.h"
#include "base/result.h"
#include "store/assaybook.h"

namespace d2dpo {

/// How pairs are made from an assay's values, as the CLI and the Train view name it.
struct AssayPairsSpec {
    std::string assay;
    std::string strategy = "margin"; ///< "margin", "clusters" (g-DPO's union masks) or "best"
    double k = 2.0;                  ///< margin: k times the pair's combined spread ...
    double margin = 0.0;             ///< ... or at least this difference
    int64_t budget = 20000;          ///< at most this many pairs
    uint64_t seed = 1;
    double bestShare = 0.1;          ///< "best": the top share paired against the rest
    double heldOut = 0.0;            ///< the share kept out of the pairs (assays/heldoutsplit.h)
    std::string split = "random";    ///< how they are chosen: "random", "position" or "mutations"
    uint64_t splitSeed = 1;          ///< the held-out split's seed
};

struct AssayPairsResult {
    AssayRecord assay;
    std::vector<MeasuredSequence> sequences; ///< those the pairs may use (the held-out ones left out)
    MeasuredPairSet pairs;
    size_t heldOut = 0;                      ///< sequences kept out by the split
};

/// The assay's sequences summarised, split into those pairs may use and those held out.
Result<std::pair<std::vector<MeasuredSequence>, std::vector<MeasuredSequence>>>
splitAssay(AssayBook& store, const AssayPairsSpec& spec, AssayRecord* assay = nullptr);

/// "margin", "clusters" or "best" as a strategy, or why not.
Result<PairStrategy> pairStrategyNamed(const std::string& name);

Result<AssayPairsResult> assayPairs(AssayBook& store, const AssayPairsSpec& spec);

} // namespace d2dpo
