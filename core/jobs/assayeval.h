// SPDX-License-Identifier: GPL-3.0-or-later
// How well a fine-tuned model ranks the measurements it was not trained on (`d2dpo measurements
// eval`): the held-out sequences of an assay (assays/heldoutsplit.h, the split its run used) scored
// by the model's D2-DPO implicit reward against its reference, then set against their values:
// Spearman's correlation and the share of held-out pairs ordered as measured. Torch-free header.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"
#include "jobs/assaypairs.h"

namespace d2dpo {

struct AssayEvalSpec {
    std::string storePath;
    std::string checkpoint;     ///< the model scored (a model of the store, to find its reference)
    AssayPairsSpec split;       ///< the assay, --held-out and --split-seed its run was trained with
    int draws = 16;             ///< noise draws per sequence's implicit reward
    uint64_t seed = 1;
    int64_t maxSequences = 2000; ///< the first ones in sequence order, when more are held out
    std::string device = "auto";
};

struct AssayEvalResult {
    int64_t heldOut = 0;      ///< sequences scored
    double spearman = 0;      ///< NaN when the scores or the values do not vary
    double pairAccuracy = 0;  ///< held-out pairs of different values ordered as measured (score ties half)
    int64_t pairs = 0;
    bool selfReferenced = false; ///< a pretrained model: its implicit reward is 0 everywhere
    std::string score;        ///< the score, in words
};

Result<AssayEvalResult> evaluateOnHeldOut(const AssayEvalSpec& spec);

} // namespace d2dpo
