// SPDX-License-Identifier: GPL-3.0-or-later
// The one rule by which stored weights meet a model's slots, for a native checkpoint's tensors
// (io/checkpoint.cpp) and an imported module's weights put back after its checks
// (model/scriptweights.h): by dotted name, every slot finds a tensor of its type (and shape, when
// the slot has one to compare), and every tensor finds a slot. The first failure is said in words.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "base/result.h"

namespace d2dpo {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

/// Calls `put(name, stored)` for each slot in `slots` order once all of them matched; nothing is
/// put when any fails. `sameShape`: the stored tensor must have its slot's shape too (a module
/// whose slots are empty placeholders has none to compare).
Status matchWeights(const NamedTensors& slots, const NamedTensors& stored, bool sameShape,
                    const std::function<void(const std::string& name, const at::Tensor& stored)>& put);

} // namespace d2dpo
