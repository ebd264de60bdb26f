// SPDX-License-Identifier: GPL-3.0-or-later
// GELU with the exact (erf) form, x Phi(x), as a kernel of its own on the CPU.
//
// Why: LibTorch 1.13 from Debian runs a CPU float GELU through oneDNN's eltwise at ~0.65 ns per
// value and its backward at ~0.85 ns; the feed-forward GELUs were 12% of a small D2-DPO step
// (bench/NOTES.md, change 7). This kernel computes Phi from vectormath.h in one pass each way. It
// is the same function as torch::gelu to ~3e-7 absolute (tests/core/tst_kernels.cpp).
#pragma once

namespace at {
class Tensor;
}

namespace d2dpo {

/// x Phi(x) elementwise, differentiable. CPU float/double tensors take the kernel; any other
/// device or dtype takes torch::gelu. (Not named gelu: argument lookup would also find at::gelu.)
at::Tensor exactGelu(const at::Tensor& x);

} // namespace d2dpo
