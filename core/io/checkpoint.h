// SPDX-License-Identifier: GPL-3.0-or-later
// Checkpoints: the weights plus everything needed to rebuild the model exactly (task, model and
// noise config), the training config, step, metrics and lineage (parent id). The file starts
// with a magic, a format version, the payload size and its CRC-32, so a corrupt, truncated or
// foreign file is refused with a clear message before anything is built from it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/types.h>

#include "base/config.h"
#include "model/denoiser.h"
#include "base/result.h"
#include "base/timeutil.h"

namespace d2dpo {

struct CheckpointInfo {
    std::string id;            ///< unique id of this checkpoint
    std::string parentId;      ///< the model it was trained from; empty for a pretrained root
    std::string kind;          ///< "pretrained" or "d2dpo"
    ModelSpec spec;
    std::string trainingJson = "{}"; ///< the training config that produced it
    std::string metricsJson = "{}";  ///< its latest evaluation
    int64_t step = 0;
    std::string createdAt;     ///< ISO 8601 UTC
};

struct LoadedCheckpoint {
    CheckpointInfo info;
    Denoiser model{nullptr};
};

/// A fresh random id (16 hex digits).
std::string newCheckpointId();

/// Writes atomically (base/safeoutput.h): to a temporary file in the same folder, then renamed
/// over `path`; never over a device, a folder or one of `inputs` (the files the caller reads).
Status saveCheckpoint(const std::string& path, const Denoiser& model, const CheckpointInfo& info,
                      const std::vector<std::string>& inputs = {});


/// Reads and verifies a checkpoint and rebuilds its model on `device`; refuses one whose weights
/// are not all finite.
Result<LoadedCheckpoint> loadCheckpoint(const std::string& path, torch::Device device);

} // namespace d2dpo
