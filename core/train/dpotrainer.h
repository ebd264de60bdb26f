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

#include <torch/types.h>

#include "base/config.h"
#include "model/denoiser.h"
#include "kernels/fusedadam.h"
#include "diffusion/noiseprocess.h"
#include "tasks/task.h"
#include "base/trainlistener.h"

namespace d2dpo {

/// Where the optimizer state of the checkpoint at `checkpointPath` is kept: beside it, ".adam".
std::string optimizerStatePath(const std::string& checkpointPath);

class DpoTrainer {
public:
    DpoTrainer(Denoiser start, const Task& task, const NoiseProcess& noise, ModelSpec spec, DpoConfig config,
               SamplingConfig sampling, uint64_t seed);

    /// The preference data: winners and losers [P, D] int64 (moved to the policy's device).
    void setPreferences(const torch::Tensor& winners, const torch::Tensor& losers);
    /// Write checkpoints into `folder` (every config.checkpointEvery steps and at the end),
    /// recording `parentId` as their lineage. Without this, nothing is written.
    void setCheckpointing(std::string folder, std::string parentId);
    /// Continue a run from its checkpoint at `step` (the policy given to the constructor holds its
    /// weights): steps run from step + 1 to config.steps, Adam's moments are read from
    /// `optimizerState` (written beside every checkpoint; "" restarts them), and the step's random
    /// draws are seeded apart from the first attempt's.
    void resumeFrom(int64_t step, std::string checkpointPath, std::string optimizerState);
    /// Seed of the generator used for every evaluation (the same draws each time, so curves
    /// compare models rather than sampling noise).
    void setEvaluationSeed(uint64_t seed) { m_evalSeed = seed; }
    /// The reference's VSR under the evaluation seed, when already known (keepBest needs it;
    /// without this the trainer evaluates the reference once itself).
    void setReferenceVsr(double vsr) { m_referenceVsr = vsr; }

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
    /// Writes the policy as `name` ("" = step-NNNNNN.d2dpo) in the checkpoint folder; "" when there is none.
    std::string saveCheckpoint(int64_t step, const std::string& metricsJson, std::string& error,
                               const std::string& name = {});
    void saveOptimizerState(const std::string& checkpointPath);
    /// Steps between host reads of the loss: DpoConfig::hostReadEvery, or 1 on the CPU and
    /// kGpuHostReadEvery on a GPU (one device sync per that many steps).
    int hostReadEvery() const;
    static constexpr int kGpuHostReadEvery = 25;

    Denoiser m_policy;
    Denoiser m_reference;
    const Task& m_task;
    const NoiseProcess& m_noise;
    ModelSpec m_spec;
    DpoConfig m_config;
    SamplingConfig m_sampling;
    uint64_t m_seed;
    uint64_t m_evalSeed;
    std::optional<double> m_referenceVsr;
    torch::Tensor m_winners;
    torch::Tensor m_losers;
    std::string m_checkpointFolder;
    std::string m_parentId;
    int64_t m_startStep = 0;
    std::string m_resumedCheckpoint;
    std::string m_optimizerStateToLoad;
    std::optional<torch::Generator> m_generator;
    std::unique_ptr<FusedAdam> m_optimizer;
};

} // namespace d2dpo
