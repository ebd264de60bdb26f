// SPDX-License-Identifier: GPL-3.0-or-later
// A D2-DPO job's place in a data-parallel run (jobs/dpojob.cpp): rank 0 reads the store, records
// the run, measures the reference and writes; every other rank joins it, hears from it how the
// run starts (jobs/runsetupshare.h), checks it was started alike, and trains beside it.
// One process (no launch, or a world of 1) is not in a group, and every call is a no-op.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <torch/types.h>

#include "base/launchenvironment.h"
#include "base/result.h"
#include "base/trainlistener.h"
#include "jobs/dpojob.h"
#include "jobs/trainingpairs.h"
#include "train/dpotrainer.h"

namespace d2dpo {

class TrainingGroup;

class DpoRunGroup {
public:
    explicit DpoRunGroup(const std::optional<LaunchEnvironment>& launch);

    bool inGroup() const { return m_launch.has_value(); }
    bool isMain() const { return !m_launch || m_launch->isMain(); }
    int localRank() const { return m_launch ? m_launch->localRank : 0; }

    /// Joins the other ranks (within the spec's group timeout).
    Status join(const DpoJobSpec& spec, TrainListener& listener);

    /// Rank 0, failing before the others heard from it, tells them why: they end with its message
    /// rather than a lost connection. Returns `error`.
    std::string tellFailure(const std::string& error, torch::Device device);

    /// Rank 0 tells, the others hear: the settings (checked against theirs), the resumed step, the
    /// evaluations' size, the reference's VSR and the pairs; `options` then trains as this rank
    /// (the others write no checkpoints).
    Status shareSetup(DpoJobSpec& spec, std::optional<DpoResumePoint>& resume, TrainingPairs& pairs,
                      torch::Device device, DpoTrainerOptions& options);

private:
    std::optional<LaunchEnvironment> m_launch;
    std::shared_ptr<TrainingGroup> m_group;
    int m_timeoutSeconds = 300;
    bool m_setupShared = false; ///< rank 0 has told the others how the run starts, or why it cannot
};

} // namespace d2dpo
