// SPDX-License-Identifier: GPL-3.0-or-later
// One D2-DPO run as the desktop application and `d2dpo train` start it: load the reference
// checkpoint, gather the preference pairs (the experts' decisive labels in the store, or
// rule-made pairs for the paper's experiment), measure the reference (the plots' baselines),
// train, and record the run, its metric series and the fine-tuned model in the store.
// Torch-free header: the GUI's worker adapter includes it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/launchenvironment.h"
#include "base/result.h"
#include "base/trainlistener.h"
#include "jobs/assaypairs.h"
#include "jobs/runfolder.h"

namespace d2dpo {

enum class PreferenceSource {
    StoreLabels,           ///< the store's active left/right labels (ties and skips left out)
    RulePairs,             ///< pairs of training sequences the task's rule ranks apart (the paper's experiment)
    Measurements,          ///< pairs made from an assay's values in the store (DpoJobSpec::measured)
    LabelsAndMeasurements, ///< both, each drawn at its weight
};

struct DpoJobSpec {
    std::string referencePath;     ///< the checkpoint the policy starts from
    std::string storePath;         ///< where the run is recorded; "" records nothing
    PreferenceSource source = PreferenceSource::StoreLabels;
    int64_t rulePairs = 20000;     ///< with PreferenceSource::RulePairs
    std::string rule;              ///< the rule for rule-made pairs and the metrics; "" = the reference's task's
    std::vector<std::string> labelers; ///< with StoreLabels: whose labels count; empty = everyone's
    AssayPairsSpec measured;       ///< with Measurements: the assay and how its pairs are made
    double labelsWeight = 1.0;     ///< with LabelsAndMeasurements: each source's share of a batch is
    double measurementsWeight = 1.0; ///< its weight over the two weights' sum
    /// With Measurements alone: score the pairs inside each group of sequences they link in one
    /// pass per group (g-DPO's grouped scoring, diffusion/groupedestimator.h); masking noise only.
    bool grouped = false;
    DpoConfig dpo;
    DpoScheduleConfig schedule;
    SamplingConfig sampling;
    /// > 0: a new run's evaluations draw as many samples as fit in about this time at the
    /// reference's cost (one pass timed before the run is recorded), at most schedule.evalSamples;
    /// the run records the count drawn. 0: schedule.evalSamples exactly.
    double evalSeconds = 0;
    std::optional<double> eta;     ///< remasking coefficient for training and sampling; unset: the reference's
    std::string device = "auto";   ///< "auto", "cpu", "cuda", "cuda:N"
    int threads = 0;               ///< CPU threads of the thread that runs the job; 0: the free physical cores
    int reservedCores = 0;         ///< with threads 0: cores also left free (for a GUI thread)
    uint64_t seed = 0;
    std::string outputFolder;      ///< the checkpoints go here
    bool evaluateReference = true; ///< measure the reference first, reported with ofReference
    int64_t resumeRunId = 0;       ///< continue this stopped or interrupted run (jobs/dporesume.h)
    /// A team store that cannot be reached when the run ends is waited for this long (jobs/storewait.h)
    /// before the run ends saying what is left to record and how (`d2dpo store record-run`).
    int storeWaitSeconds = 600;
    /// One rank of a data-parallel run (torchrun's variables, or `d2dpo train --nproc`); unset: one
    /// process. Rank 0 reads the store, records the run and writes the checkpoints; the others
    /// train beside it and write nothing (train/dpotrainer.h says how the batch is shared).
    std::optional<LaunchEnvironment> launch;
    /// How long a rank waits for the slowest one in a step before the run ends stopped on every rank.
    int groupTimeoutSeconds = 300;
};

struct DpoJobOutcome {
    FinishedEvent finished;
    int64_t runId = 0;             ///< 0 when nothing was recorded
    std::string resultModelId;     ///< the fine-tuned model as the store knows it
    int64_t pairs = 0;             ///< preference pairs trained on
};

/// Runs the job in the calling thread. A new run writes into `outputFolder`, which must be new or
/// empty, and holds a lock there while it lives (base/runlock.h); each checkpoint is recorded as a
/// model of the run when written. Stored paths are absolute. Reports through `listener` (onFinished
/// is always called exactly once). Never throws: every failure ends as RunStatus::Failed with a message.
DpoJobOutcome runDpoJob(const DpoJobSpec& spec, TrainListener& listener, const StopToken& stop);


} // namespace d2dpo
