// SPDX-License-Identifier: GPL-3.0-or-later
// What the experts think of each other: on the pairs of sequences two or more labelers judged,
// Cohen's kappa for each two of them and Krippendorff's alpha over everyone, with bootstrap 95%
// intervals; per labeler, agreement with the others' majority, the share of left picks (position
// bias), the median time per decision and the accuracy on gold pairs. `d2dpo prefs agreement`
// and the desktop's Labelers panel both show it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "experts/agreementmath.h"
#include "store/preferencestore.h"

namespace d2dpo {

/// How labels count, in words (printed with every report).
extern const char* const kAgreementConventions;

struct LabelerPairAgreement {
    std::string first;
    std::string second;
    int64_t shared = 0; ///< pairs of sequences both judged
    double kappa = 0;   ///< NaN when undefined
    Interval interval;
};

struct LabelerProfile {
    std::string labeler;
    int64_t labels = 0;           ///< active labels, of every purpose
    int64_t judged = 0;           ///< of those, judgements of training and comparison pairs (skips left out)
    int64_t majorityItems = 0;    ///< judged pairs where at least two others judged and most of them agree
    double majorityAgreement = 0; ///< the share of those where this labeler sides with that majority
    int64_t sided = 0;            ///< left or right picks
    double leftShare = 0;         ///< of those, left: 0.5 when sides are random and the labeler unbiased
    double medianDecideMs = 0;
    int64_t goldJudged = 0;       ///< gold pairs labelled (skips left out)
    int64_t goldCorrect = 0;
    double goldAccuracy = 0;      ///< NaN without gold labels
};

struct TeamAgreement {
    int64_t items = 0;       ///< showings of pairs of sequences judged (training and comparison pairs)
    int64_t sharedItems = 0; ///< of those, judged by two labelers or more
    double alpha = 0;        ///< Krippendorff's alpha, nominal; NaN when undefined
    Interval alphaInterval;
    std::vector<LabelerPairAgreement> pairs;
    std::vector<LabelerProfile> labelers;
};

/// The report over `labels` (the store's judgedLabels), only the task's when `task` is given.
/// Intervals from `resamples` bootstrap resamples of the judged pairs, seeded.
TeamAgreement measureAgreement(const std::vector<JudgedLabel>& labels, const std::string& task = "",
                               int resamples = 1000, uint64_t seed = 1);

nlohmann::json toJson(const TeamAgreement& report);

} // namespace d2dpo
