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
    std::string torchscript; ///< an imported model's TorchScript archive; else empty
    /// Format 2: `torchscript` is its code alone and `weights` are its tensors, put in after the
    /// code's checks. Format 1: the archive holds its weights (and older files hold them apart too).
    bool scriptWeightsApart = false;
};

} // namespace d2dpo
