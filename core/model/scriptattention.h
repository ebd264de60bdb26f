// SPDX-License-Identifier: GPL-3.0-or-later
// An imported model's attention, run by d2dpo's fused kernel.
//
// Models written for PyTorch 1.13 spell attention out: softmax(q @ k.transpose(-2, -1) / c, -1)
// @ v. On a CPU, LibTorch runs that as batched products of small matrices, then a division and a
// softmax over [B, H, N, N] scores that are bound by memory. At ESM2-8M's 20 heads of width 16
// and length 152 that costs 2.4x what kernels/attention.h does, forward and backward.
//
// The rewrite finds that expression in a copy of the module's forward (submodules inlined) and
// puts d2dpo::attention in its place. That op runs the kernel where the kernel computes the same
// thing (q, k and v of one shape [B, H, N, W] or [G, N, W], the softmax over the last dimension
// in the scores' own type, on the CPU in float or double), and the expression itself otherwise:
// a model computes what its code says either way, to rounding. The module's own code is never
// changed: what is exported and what the operation check reads is the code the user brought.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

namespace at {
class Tensor;
}
namespace c10 {
class Scalar;
enum class ScalarType : int8_t;
} // namespace c10
namespace torch::jit {
struct Module;
struct GraphFunction;
} // namespace torch::jit

namespace d2dpo {

struct FusedForward {
    /// The forward with the attention rewritten and the linear layers routed through oneDNN
    /// (model/scriptlinear.h), called with (the module, tokens, t); null when neither found
    /// anything, or when the environment variables D2DPO_SCRIPT_ATTENTION and D2DPO_SCRIPT_LINEAR
    /// are "plain" (to compare against the model's own code).
    std::shared_ptr<torch::jit::GraphFunction> function;
    int64_t rewritten = 0; ///< attention expressions replaced
    int64_t linears = 0;   ///< aten::linear nodes routed through oneDNN's sgemm
};

FusedForward fuseScriptForward(const torch::jit::Module& module);

/// What d2dpo::attention computes: softmax(q @ k.transpose(t0, t1) / c, dim, dtype) @ v where
/// `divide`, else with * c. Through the fused kernel where that is the same arithmetic.
at::Tensor scriptAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t t0, int64_t t1,
                           const c10::Scalar& c, bool divide, int64_t dim, std::optional<c10::ScalarType> dtype);

} // namespace d2dpo
