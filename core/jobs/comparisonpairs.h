// SPDX-License-Identifier: GPL-3.0-or-later
// The pairs of a blind comparison of models: for each two models, pairs of one sample of each,
// drawn with the models' own samplers and shown on random sides. Torch stays behind
// PairGenerator: the desktop's "Compare models…" includes this header.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
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

/// Samples drawn of all the models' draws, and their total: heard per pass of a model (at most
/// every 0.2 s), so a bar moves and a time left shows from the first seconds at any model size.
using ComparisonProgress = std::function<void(double done, int64_t total)>;

/// `perTwoModels` draws for each two of `generators` (all of one task), in a random order (no run
/// of one pairing shows which models a pair compares); seeded, so the same call draws the same pairs.
/// `stop`, heard before each pass of a model, ends it with an empty draw (no pairs, no error).
Result<ComparisonDraw> drawComparisonPairs(const std::vector<PairGenerator*>& generators, int64_t perTwoModels,
                                           uint64_t seed, const SamplingConfig& sampling = {},
                                           const StopToken* stop = nullptr, const ComparisonProgress& progress = {});

/// A blind comparison drawn and not yet stored: its models as their checkpoints describe them, and
/// its pairs.
struct PreparedComparison {
    std::vector<ModelRecord> models;
    ComparisonDraw draw;
};

/// The one way `d2dpo compare` and the desktop's "Compare models…" set a comparison up: loads each
/// checkpoint on `device`, refuses a model named twice and a draw that gave no pair (the models
/// drew the same sequence every time), and draws with `sampling`. `stop`, heard between the models'
/// loads and before each pass of a draw, ends it within a pass with an empty result (no error, no
/// models).
Result<PreparedComparison> prepareComparison(const std::vector<std::string>& checkpoints, const std::string& device,
                                             int64_t perTwoModels, uint64_t seed, const SamplingConfig& sampling = {},
                                             const StopToken* stop = nullptr, const ComparisonProgress& progress = {});

/// Records the models in `store` (a model the store knows keeps its name, lineage and run) and
/// queues the pairs for every labeler: the comparison's id.
Result<int64_t> storeComparison(PreferenceStore& store, const PreparedComparison& prepared);

} // namespace d2dpo
