// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo pairs --least-sure`'s selection: several times as many candidate pairs drawn as asked
// for, each scored with the model's implicit reward margin, the least sure kept.
#pragma once

#include <string>
#include <vector>

#include "base/config.h"
#include "base/result.h"
#include "jobs/pairgenerator.h"
#include "store/preferencestore.h"

namespace d2dpo::cli {

struct LeastSureOptions {
    bool enabled = false;
    int64_t candidatesPerPair = 4;
    std::string reference; ///< "" = the model's parent in the store, else the model itself
    int draws = 16;
    std::string device = "auto";
};

struct LeastSurePairs {
    std::vector<ShownPair> pairs;
    std::vector<double> margins;
    int64_t candidates = 0;
    double candidatesMeanAbs = 0;
    std::string scoredBy;
};

Result<LeastSurePairs> leastSurePairs(PreferenceStore& store, PairGenerator& generator, const LeastSureOptions& o,
                                      int64_t count, uint64_t seed, const SamplingConfig& sampling);

} // namespace d2dpo::cli
