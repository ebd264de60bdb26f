// SPDX-License-Identifier: GPL-3.0-or-later
// torch::optim::Adam whose step on CPU float parameters is one pass over each parameter.
//
// Why: LibTorch's Adam runs six to eight tensor operations per parameter (each with its
// dispatch, a wrapped scalar and type promotion); for the denoiser's 34 small parameters that
// was ~1.2 ms, 4% of a small D2-DPO step (bench/NOTES.md, change 7). This step reads and writes
// each value once. Same options, same per-parameter state (AdamParamState), same update:
// it matches torch::optim::Adam to float rounding (tests/core/tst_kernels.cpp).
#pragma once

#include <sstream>
#include <string>
#include <type_traits>

#include <torch/optim/adam.h>

namespace d2dpo {

// The key under which torch::optim::Adam keeps a parameter's state: the TensorImpl's address as a
// string in LibTorch 1.13 (what c10::guts::to_string, since removed, made of it), the address itself
// in 2.6. Key is the state map's key_type, so the code follows whichever LibTorch it is built with.
template <typename Key>
inline Key adamStateKey(c10::TensorImpl* impl)
{
    if constexpr (std::is_same_v<Key, std::string>) {
        std::ostringstream key;
        key << static_cast<const void*>(impl);
        return key.str();
    } else {
        return impl;
    }
}

class FusedAdam : public torch::optim::Adam {
public:
    using torch::optim::Adam::Adam;

    /// The fused update where every parameter with a gradient is a contiguous CPU float tensor
    /// and no group uses amsgrad; otherwise torch::optim::Adam::step.
    torch::Tensor step(LossClosure closure = nullptr) override;

    /// Empty when every parameter's state (after load(), from a file someone else may have
    /// written) has moments of its parameter's shape, dtype and device; else which one does not.
    std::string stateMismatch() const;
};

} // namespace d2dpo
