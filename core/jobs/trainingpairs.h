// SPDX-License-Identifier: GPL-3.0-or-later
// The pairs a D2-DPO run trains on, by source: rule-made pairs (the paper's experiment), the
// experts' decisive labels in the store, pairs made from an assay's measurements, or labels and
// measurements together, each source drawn at its stated weight. Counted by source and told to
// the listener before the run starts. For jobs/ (torch types).
#pragma once

#include <functional>
#include <string>

#include <torch/torch.h>

#include "base/result.h"
#include "jobs/dpojob.h"

namespace d2dpo {

class PreferenceStore;
class Task;

struct TrainingPairs {
    torch::Tensor winners, losers; ///< [P, D] int64
    torch::Tensor weights;         ///< [P] float, how often each pair is drawn; undefined: alike
    int64_t labelPairs = 0;
    int64_t measuredPairs = 0;
    int64_t rulePairs = 0;
    int64_t measuredSequences = 0; ///< the assay's sequences the measured pairs come from
    std::string measuredDescription;
};

/// `store` may be null only for rule-made pairs. Every line for the user goes to `log`.
Result<TrainingPairs> gatherTrainingPairs(const DpoJobSpec& spec, PreferenceStore* store, const Task& task,
                                          torch::Device device, const std::function<void(const std::string&)>& log);

/// The sources as recorded with a run (DpoJobSpec's fields, and the counts), read back by a resume.
std::string trainingPairsJson(const DpoJobSpec& spec, const TrainingPairs& pairs, const std::string& rule);

} // namespace d2dpo
