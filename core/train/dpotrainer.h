// SPDX-License-Identifier: GPL-3.0-or-later
// D2-DPO fine-tuning: the policy starts as the given model, the reference is a frozen copy of
// it; each step draws a batch of preference pairs, minimises the closed-form D2-DPO loss with
// Adam, and reports the loss and implicit rewards; every few steps it samples and evaluates.
// Reports through a TrainListener, stops promptly on a StopToken, never throws.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <torch/arg.h>
#include <torch/types.h>

#include "base/config.h"
#include "model/denoiser.h"
#include "kernels/fusedadam.h"
#include "diffusion/groupedestimator.h"
#include "diffusion/noiseprocess.h"
#include "tasks/task.h"
#include "base/trainlistener.h"

namespace d2dpo { class TrainingGroup; }

namespace d2dpo {

/// Where the optimizer state of the checkpoint at `checkpointPath` is kept: beside it, ".adam".
std::string optimizerStatePath(const std::string& checkpointPath);

/// Where a resumed run continues from (jobs/dporesume.h finds it).
struct DpoResumePoint {
    int64_t step = 0;            ///< steps run from step + 1 to DpoConfig::steps
    std::string checkpointPath;  ///< the checkpoint whose weights the policy given to the trainer holds
    std::string optimizerState;  ///< Adam's moments written beside it; "" restarts them
};

/// How a DpoTrainer runs, as PyTorch's C++ frontend passes a module's options: what every trainer
/// needs in the constructor, the rest through chaining setters, e.g.
/// `DpoTrainerOptions(spec, dpo).sampling(s).seed(3).checkpointFolder(dir)`.
struct DpoTrainerOptions {
    DpoTrainerOptions(ModelSpec spec, DpoConfig dpo) : spec_(std::move(spec)), dpo_(std::move(dpo)) {}
    /// The reference's spec: the policy's checkpoints carry it.
    TORCH_ARG(ModelSpec, spec);
    TORCH_ARG(DpoConfig, dpo);
    /// When it evaluates, checkpoints, reports, reads the host; which checkpoint it keeps.
    TORCH_ARG(DpoScheduleConfig, schedule) = {};
    /// How evaluations sample.
    TORCH_ARG(SamplingConfig, sampling) = {};
    /// Seeds the training draws (batches, t, masks).
    TORCH_ARG(uint64_t, seed) = 0;
    /// Seeds every evaluation alike (the same draws each time, so curves compare models rather
    /// than sampling noise); unset: seed + 1, as MeasurementSpec::ofRun says.
    TORCH_ARG(std::optional<uint64_t>, evaluationSeed) = std::nullopt;
    /// The reference's VSR under the evaluation seed, when already known (keepBest needs it;
    /// unset, the trainer evaluates the reference once itself).
    TORCH_ARG(std::optional<double>, referenceVsr) = std::nullopt;
    /// Checkpoints go here (every DpoScheduleConfig::checkpointEvery steps and at the end); "" writes none.
    TORCH_ARG(std::string, checkpointFolder) = "";
    /// The lineage the checkpoints record.
    TORCH_ARG(std::string, parentId) = "";
    /// Continue a run instead of starting one: the training draws are seeded apart from the first
    /// attempt's.
    TORCH_ARG(std::optional<DpoResumePoint>, resume) = std::nullopt;
    /// Train as one rank of a data-parallel run (distributed/traininggroup.h): every rank draws the
    /// whole batch alike, scores its share of DpoConfig::batch pairs (which the group's size must
    /// divide), and takes the same Adam step on the summed gradients; rank 0 alone writes
    /// checkpoints (give the others no folder). A stop asked of any rank ends every rank after the
    /// step under way; a lost rank ends the run stopped. Unset: one process.
    TORCH_ARG(std::shared_ptr<TrainingGroup>, group) = nullptr;
};

class DpoTrainer {
public:
    DpoTrainer(Denoiser start, const Task& task, const NoiseProcess& noise, DpoTrainerOptions options);

    /// The preference data: winners and losers [P, D] int64 (moved to the policy's device).
    /// `weights` [P] float (optional): how often each pair is drawn, relative to the others (a
    /// source's weight over its pair count, when labels and measurements train together); without
    /// it every pair is drawn alike.
    void setPreferences(const torch::Tensor& winners, const torch::Tensor& losers,
                        const torch::Tensor& weights = {});

    /// Scores the pairs set above inside their groups, one pass per group and draw (g-DPO;
    /// diffusion/groupedestimator.h); `groups` holds the same pairs in the same order. The batch
    /// draws stay the pairs'.
    void setPreferenceGroups(const PairGroups& groups);

    /// The whole run, in the named steps of train/dporunsteps.cpp.
    FinishedEvent run(TrainListener& listener, const StopToken& stop);

    /// One step's figures as tensors on the policy's device, not yet read on the host.
    struct StepTensors {
        torch::Tensor loss;    ///< [] before the update
        torch::Tensor rewards; ///< [4] rewards/chosen, rejected, margins, accuracies; undefined unless asked for
    };
    /// One optimisation step on a random batch of the preference pairs, without waiting for the
    /// device. On the CPU (where reading costs nothing) a non-finite loss leaves the weights
    /// unchanged; on a GPU the update is applied and the loss is checked when it is read.
    StepTensors step(bool withRewards);

    struct StepOutcome {
        double loss = 0;     ///< before the update; non-finite: the weights were left unchanged (CPU)
        RewardStats rewards; ///< filled when asked for
    };
    /// step() with its figures read on the host.
    StepOutcome trainStep(bool withRewards);

    Denoiser policy() const { return m_policy; }
    Denoiser reference() const { return m_reference; }

private:
    friend class DpoRunSteps; ///< run()'s state and steps
    /// Writes the policy as `name` ("" = step-NNNNNN.d2dpo) in the checkpoint folder; "" when there is none.
    std::string saveCheckpoint(int64_t step, const std::string& metricsJson, std::string& error,
                               const std::string& name = {});
    void saveOptimizerState(const std::string& checkpointPath);
    /// Steps between host reads of the loss: DpoScheduleConfig::hostReadEvery, or 1 on the CPU and
    /// kGpuHostReadEvery on a GPU (one device sync per that many steps).
    int hostReadEvery() const;
    static constexpr int kGpuHostReadEvery = 25;

    /// Whether the policy is low-rank adapters on its model (DpoConfig::loraRank).
    bool isAdapted() const;

    std::string m_setupError; ///< before m_policy: the adapters that could not be made, said by run()
    Denoiser m_policy;
    Denoiser m_reference;
    const Task& m_task;
    const NoiseProcess& m_noise;
    ModelSpec m_spec;
    DpoConfig m_config;
    DpoScheduleConfig m_schedule;
    SamplingConfig m_sampling;
    uint64_t m_seed;
    uint64_t m_evalSeed;
    std::optional<double> m_referenceVsr;
    torch::Tensor m_winners;
    torch::Tensor m_losers;
    torch::Tensor m_pairWeights; ///< [P] float, or undefined: uniform draws
    std::optional<PairGroups> m_groups; ///< set: grouped scoring
    std::string m_checkpointFolder;
    std::string m_parentId;
    int64_t m_startStep = 0;
    std::string m_resumedCheckpoint;
    std::string m_optimizerStateToLoad;
    std::optional<torch::Generator> m_generator;
    std::shared_ptr<TrainingGroup> m_group; ///< set: one rank of a data-parallel run
    const StopToken* m_stop = nullptr;      ///< run()'s, given to the group with each step
    bool m_groupStopAsked = false;          ///< the last step's exchange said a rank was asked to stop
    std::unique_ptr<FusedAdam> m_optimizer;
};

} // namespace d2dpo
