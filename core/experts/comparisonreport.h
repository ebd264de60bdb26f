// SPDX-License-Identifier: GPL-3.0-or-later
// The result of a blind comparison of models over the pairs labelled so far: for each model its
// win rate and Bradley-Terry score, for each two models the head-to-head record and the fitted
// P(first beats second), all with bootstrap 95% intervals over the labels. `d2dpo compare` and
// the desktop's comparison window both show it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "experts/agreementmath.h"
#include "store/preferencestore.h"

namespace d2dpo {

/// How labels count, in words.
extern const char* const kComparisonConventions;

struct ModelStanding {
    std::string modelId;
    int64_t games = 0;
    double winRate = 0; ///< ties half a win; NaN without games
    Interval winRateInterval;
    double score = 0;   ///< Bradley-Terry log-strength, centred on 0 over the models
    Interval scoreInterval;
};

struct HeadToHead {
    std::string first;
    std::string second;
    int64_t firstWins = 0;
    int64_t secondWins = 0;
    int64_t ties = 0;    ///< ties and both-bad
    int64_t bothBad = 0; ///< of the ties, both-bad
    double firstBeatsSecond = 0; ///< Bradley-Terry P(first beats second)
    Interval interval;
};

struct ComparisonReport {
    int64_t comparisonId = 0;
    int64_t pairs = 0;
    int64_t games = 0; ///< labels that count (skips left out)
    int64_t skips = 0;
    std::vector<ModelStanding> models;
    std::vector<HeadToHead> headToHead;
};

/// The report of `comparison` from its active labels (judgedLabels(comparison.id)).
ComparisonReport measureComparison(const ComparisonRecord& comparison, const std::vector<JudgedLabel>& labels,
                                   int resamples = 1000, uint64_t seed = 1);

nlohmann::json toJson(const ComparisonReport& report);

} // namespace d2dpo
