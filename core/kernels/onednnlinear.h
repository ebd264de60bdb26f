// SPDX-License-Identifier: GPL-3.0-or-later
// A linear layer, x W^T + b, whose three matrix products (forward, and the input's and the weight's
// gradients) run through oneDNN's sgemm: the library LibTorch itself links (Debian's libdnnl),
// found at run time, so nothing new is needed to build or run.
//
// Why: a D2-DPO step of an imported protein model is two thirds matrix products (`perf`, ESM2-8M at
// length 150). LibTorch hands them to the system BLAS; oneDNN's sgemm compiles its kernels for the
// processor it finds when first called. At one thread on this AVX-512 machine it ran the model's
// shapes at 244-248 GFLOP/s, OpenBLAS at 110-125 with the core its environment forces
// (OPENBLAS_CORETYPE=Haswell) and 218-238 with its own choice (docs/benchmarks.md).
#pragma once

#include <optional>

namespace at {
class Tensor;
}

namespace d2dpo {

/// Whether oneDNN's sgemm was found (libdnnl.so.3 or .2, or a library already loaded that has it),
/// and D2DPO_ONEDNN_GEMM is not "off".
bool onednnGemmAvailable();

/// torch::linear(x, w, b), differentiable in all three. Float CPU tensors (x [..., K], w [N, K],
/// b [N] or none) take oneDNN's sgemm where it is available; anything else takes torch::linear.
/// Under bf16 (kernels/matmulprecision.h), float32 operands are rounded to bf16 and multiplied with
/// float32 sums, for the forward product and both gradients; the result, the bias and the
/// gradients stay float32. On a CPU that is oneDNN's bf16 gemm (about twice sgemm's rate where the
/// processor has bf16 units), or the same arithmetic on LibTorch's float32 products where it does
/// not run; on a GPU, LibTorch's bf16 products, whose results are rounded to bf16 as well, as
/// torch.autocast's are. Double tensors stay double.
at::Tensor onednnLinear(const at::Tensor& x, const at::Tensor& w, const std::optional<at::Tensor>& b);

/// torch::linear itself under float32 (the same operations, bit for bit, as before precisions
/// existed: the project's own transformer keeps its numbers), onednnLinear's bf16 under bf16.
at::Tensor linearAtPrecision(const at::Tensor& x, const at::Tensor& w, const std::optional<at::Tensor>& b);

} // namespace d2dpo
