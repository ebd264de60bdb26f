// SPDX-License-Identifier: GPL-3.0-or-later
// What rank 0 of a data-parallel D2-DPO run tells the other ranks before the first step, besides
// the weights and Adam's state (train/groupstep.h): rank 0 alone reads the store, records the
// run and measures the reference, so the others learn from it the settings to check their own
// against, where the run starts, the evaluations' size, the reference's VSR and the pairs.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "jobs/trainingpairs.h"

namespace d2dpo {

class TrainingGroup;

struct SharedRunSetup {
    std::string error;        ///< rank 0 could not start the run: every rank ends with this
    std::string settingsJson; ///< DpoConfig and DpoScheduleConfig as rank 0 runs them
    int64_t startStep = 0;    ///< a resumed run's step
    int64_t evalSamples = 0;
    std::optional<double> referenceVsr;
};

/// Rank 0 sends `setup` (and, without an error, `pairs`); the others receive rank 0's in their
/// place, their own pairs replaced on `device`. The others wait for rank 0 up to `wait`: its
/// setup may read a large store and measure the reference.
void shareRunSetup(TrainingGroup& group, SharedRunSetup& setup, TrainingPairs& pairs, torch::Device device,
                   std::chrono::seconds wait);

} // namespace d2dpo
