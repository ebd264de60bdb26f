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

/// Loads and verifies the checkpoint at `path` on `device`, then makes its task (with `rule` in
/// place of the task's own when given) and noise process. The checkpoint's spec then carries the
/// rule, so checkpoints trained from it do too.
Result<OpenedModel> openModel(const std::string& path, torch::Device device, const std::string& rule = "");
/// The same on a device named as the user names it ("auto", "cpu", "cuda", "cuda:N").
Result<OpenedModel> openModel(const std::string& path, const std::string& device, const std::string& rule = "");

/// Ok when `task` reads and writes the sequences of the task with `expectedKey`; else an error
/// that names both (a model of one task given where another task's data is expected).
Status requireTask(const Task& task, const std::string& expectedKey, const std::string& what);

} // namespace d2dpo
