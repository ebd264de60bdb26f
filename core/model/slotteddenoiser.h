// SPDX-License-Identifier: GPL-3.0-or-later
// A denoiser whose weights sit in named slots that can be read and replaced between calls: what
// low-rank adapters (loradenoiser.h) need to put W0 + B A where a weight was, whatever runs the
// model (a TorchScript module reads its slots on every call; the native ESM network rebinds them).
#pragma once

#include <string>

#include "model/denoiser.h"

namespace d2dpo {

class SlottedDenoiser : public DenoiserModel {
public:
    /// The tensor in the parameter slot `name` (dotted, as named_parameters() names it) and a
    /// tensor put in its place.
    virtual torch::Tensor parameterSlot(const std::string& name) const = 0;
    virtual void setParameterSlot(const std::string& name, const torch::Tensor& value) = 0;

protected:
    using DenoiserModel::DenoiserModel;
};

} // namespace d2dpo
