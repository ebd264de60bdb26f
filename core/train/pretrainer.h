// SPDX-License-Identifier: GPL-3.0-or-later
// Pretraining: fit the denoiser to the task's data with the masked cross-entropy (losses.h),
// Adam, reporting through a TrainListener and stopping promptly on a StopToken.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "base/config.h"
#include "base/result.h"
#include "model/denoiser.h"
#include "kernels/fusedadam.h"
#include "diffusion/noiseprocess.h"
#include "tasks/task.h"
#include "base/trainlistener.h"

namespace d2dpo {

class Pretrainer {
public:
    Pretrainer(Denoiser model, const Task& task, const NoiseProcess& noise, PretrainConfig config, uint64_t seed);

    /// Trains in the calling thread. Never throws: failures come back in the FinishedEvent,
    /// which is also sent to the listener. A non-finite loss stops before the weights change.
    FinishedEvent run(TrainListener& listener, const StopToken& stop);

    /// One optimisation step; returns the loss before the update. A non-finite loss leaves the
    /// weights unchanged.
    double trainStep();

    /// Writes the model as it stands after the given step (a snapshot of a long pretraining).
    using SnapshotWriter = std::function<Status(int64_t step)>;
    /// Calls `write` after every `every` steps but the last one, which is the caller's to write.
    /// A failed write ends the run as Failed with its message.
    void writeSnapshots(int64_t every, SnapshotWriter write);

    Denoiser model() const { return m_model; }

private:
    Denoiser m_model;
    const Task& m_task;
    const NoiseProcess& m_noise;
    PretrainConfig m_config;
    uint64_t m_seed;
    std::optional<torch::Generator> m_generator;
    std::unique_ptr<FusedAdam> m_optimizer;
    int64_t m_snapshotEvery = 0;
    SnapshotWriter m_writeSnapshot;
};

} // namespace d2dpo
