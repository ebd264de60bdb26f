// SPDX-License-Identifier: GPL-3.0-or-later
// What a checkpoint file holds once its format is read, whatever its format version: the model's
// description and its tensors. io/checkpoint.cpp builds the model from it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

namespace d2dpo {

struct CheckpointPayload {
    std::string infoJson; ///< CheckpointInfo as JSON
    std::vector<std::pair<std::string, torch::Tensor>> weights; ///< a native model's parameters and buffers, by name
    std::string torchscript; ///< an imported model's TorchScript archive (its code and its weights); else empty
};

} // namespace d2dpo
