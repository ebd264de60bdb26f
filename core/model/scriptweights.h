// SPDX-License-Identifier: GPL-3.0-or-later
// An imported model's weights apart from its code. A checkpoint stores a TorchScript module's code
// as an archive whose parameters and buffers are empty tensors, and its weights as safetensors
// data (io/checkpoint.h): the weights are read without any code, and put into the module only
// after its code has passed every check (model/archivegate.h, model/scriptoperations.h).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <torch/csrc/jit/api/module.h>

#include "base/result.h"

namespace d2dpo {

/// The module holding the slot `name` ("a.b.weight": submodule a.b) and the slot's own name.
std::pair<torch::jit::Module, std::string> slotOwner(const torch::jit::Module& root, const std::string& name);

/// A copy of `module` sharing nothing it changes: its parameters and buffers are empty tensors of
/// their types, the original's untouched (its weights are shared, not copied, while this is made).
torch::jit::Module withoutWeights(const torch::jit::Module& module);

/// Puts `weights` into `module`'s parameter and buffer slots by their dotted names: each slot
/// must find a tensor of its type, and every tensor a slot.
Status putWeights(torch::jit::Module& module, const std::vector<std::pair<std::string, torch::Tensor>>& weights);

} // namespace d2dpo
