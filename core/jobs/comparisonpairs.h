// SPDX-License-Identifier: GPL-3.0-or-later
// The pairs of a blind comparison of models: for each two models, pairs of one sample of each,
// drawn with the models' own samplers and shown on random sides. Torch stays behind
// PairGenerator: the desktop's "Compare models…" includes this header.
#pragma once

#include <cstdint>
#include <vector>

#include "base/config.h"
#include "base/result.h"
#include "jobs/pairgenerator.h"
#include "store/preferencestore.h"

namespace d2dpo {

struct ComparisonDraw {
    std::vector<ShownPair> pairs;
    int64_t sameSequence = 0; ///< draws where both models gave the same sequence: no pair to show
};

/// `perTwoModels` draws for each two of `generators` (all of one task), in a random order (no run
/// of one pairing shows which models a pair compares); seeded, so the same call draws the same pairs.
Result<ComparisonDraw> drawComparisonPairs(const std::vector<PairGenerator*>& generators, int64_t perTwoModels,
                                           uint64_t seed, const SamplingConfig& sampling = {});

} // namespace d2dpo
