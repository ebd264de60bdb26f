// SPDX-License-Identifier: GPL-3.0-or-later
// One stored model opened for work: its checkpoint (weights and configs), its task and noise
// process, on a resolved device. Every job that starts from a checkpoint file opens it here.
// Torch header, for jobs/ sources only (the views and the CLI cannot see model/).
#pragma once

#include <memory>
#include <string>

#include <torch/types.h>

#include "base/result.h"
#include "diffusion/noiseprocess.h"
#include "io/checkpoint.h"
#include "tasks/task.h"

namespace d2dpo {

struct OpenedModel {
    torch::Device device{torch::kCPU};
    LoadedCheckpoint checkpoint;
    std::unique_ptr<Task> task;
    std::unique_ptr<NoiseProcess> noise;
};

/// Loads and verifies the checkpoint at `path` on `device`, then makes its task and noise process.
Result<OpenedModel> openModel(const std::string& path, torch::Device device);
/// The same on a device named as the user names it ("auto", "cpu", "cuda", "cuda:N").
Result<OpenedModel> openModel(const std::string& path, const std::string& device);

} // namespace d2dpo
