// SPDX-License-Identifier: GPL-3.0-or-later
// The names of the training metrics, as the store records them, the curves files and the model
// card write them and the views read them back, each with a description for people. Reward names
// follow the DPO tools users know (TRL's rewards/*); "reference/<name>" is the reference model's
// value of <name>. The sample metrics (VSR and the rest) are declared by each task (tasks/) and
// carry their own descriptions in SampleMetrics.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/samplemetrics.h"
#include "base/trainlistener.h"

namespace d2dpo::metric {

inline constexpr const char* kLoss = "loss";
inline constexpr const char* kStepsPerSecond = "steps_per_second";
inline constexpr const char* kRewardsChosen = "rewards/chosen";
inline constexpr const char* kRewardsRejected = "rewards/rejected";
inline constexpr const char* kRewardsMargins = "rewards/margins";
inline constexpr const char* kRewardsAccuracies = "rewards/accuracies";
inline constexpr const char* kVsr = "vsr";
inline constexpr const char* kSamples = "samples";

/// The name under which the reference model's value of `name` is recorded.
std::string ofReference(const std::string& name);

struct Description {
    const char* name;
    const char* text; ///< one line for people (tooltips, legends, the model card)
};
/// Every metric above with its description, in display order.
const std::vector<Description>& descriptions();
/// The description of `name` (a "reference/" prefix is understood), or "" when unknown.
std::string describe(const std::string& name);

/// The four implicit-reward figures by name, in the order above.
std::vector<std::pair<const char*, double>> named(const RewardStats& rewards);
/// The evaluation figures a run records over time: every value the task declared.
std::vector<std::pair<std::string, double>> recorded(const SampleMetrics& metrics);

} // namespace d2dpo::metric
