// SPDX-License-Identifier: GPL-3.0-or-later
// How well a model ranks the measurements it was not trained on (`d2dpo measurements eval`, the
// Models view's held-out figures): the held-out sequences of an assay (assays/heldoutsplit.h, the
// split its run used) scored, then set against their values: Spearman's correlation and the share
// of held-out pairs ordered as measured. Two scores, each named with its figures:
//   - the likelihood bound (ELBO, diffusion/sequencescore.h) under the reference and under the
//     model: the figure before and after fine-tuning, on equal terms;
//   - the D2-DPO implicit reward against the reference (what the loss trains), for a fine-tuned model.
// Torch-free header.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "jobs/assaypairs.h"

namespace d2dpo {

class PreferenceStore;
struct ModelRecord;

struct AssayEvalSpec {
    std::string storePath;
    std::string checkpoint;     ///< the model scored (a model of the store, to find its reference)
    AssayPairsSpec split;       ///< the assay and the held-out split
    bool splitFromRun = true;   ///< take the assay and split from the run that trained the model, when it used one
    int draws = 16;             ///< noise draws per sequence and score
    uint64_t seed = 1;
    int64_t maxSequences = 2000; ///< the first ones in sequence order, when more are held out
    std::string device = "auto";
};

/// One score's figures on the held-out sequences.
struct HeldOutFigure {
    std::string model; ///< "reference" or "fine-tuned" ("pretrained" for a model that is its own reference)
    std::string score; ///< "elbo" or "implicit-reward"
    double spearman = 0;     ///< NaN when the scores or the values do not vary
    double pairAccuracy = 0; ///< held-out pairs of different values ordered as measured (score ties half)
};

struct AssayEvalResult {
    AssayPairsSpec split;     ///< the split judged on (read from the model's run when it had one)
    bool splitFromRun = false;
    int64_t heldOut = 0;      ///< sequences scored
    int64_t pairs = 0;        ///< held-out pairs of different values
    bool selfReferenced = false; ///< a pretrained model: it has only the likelihood figure
    std::vector<HeldOutFigure> figures; ///< reference first
    std::string note;         ///< why a score is missing, when one is (another noise than masking)
};

/// The measured split of the run that trained `model` (found by its run id, or as the run whose
/// output folder holds `checkpointPath`): none when no run of the store trained it on measurements.
Result<std::optional<AssayPairsSpec>> measuredSplitOfRun(PreferenceStore& store, const ModelRecord& model,
                                                         const std::string& checkpointPath);

/// `progress` hears the scores done and their total (3 for a fine-tuned model, 1 for a pretrained one).
Result<AssayEvalResult> evaluateOnHeldOut(const AssayEvalSpec& spec,
                                          const std::function<void(int, int)>& progress = {});

/// "ELBO (the likelihood bound)" or "implicit reward against the reference", for tables.
std::string scoreInWords(const std::string& score);

} // namespace d2dpo
