// SPDX-License-Identifier: GPL-3.0-or-later
// Layer normalization over the last dimension, as a kernel of its own on the CPU.
//
// Why: LibTorch 1.13 from Debian takes ~0.5 us per 64-wide row, forward and backward: the ten
// layer norms of a small D2-DPO step (policy and reference, two blocks and the final norm) were
// 6% of it (bench/NOTES.md, change 9). This kernel keeps each row in registers and the backward
// does one pass per row plus a deterministic column sum for the weight and bias gradients. Same
// function as torch::layer_norm (biased variance, eps inside the square root) to rounding
// (tests/core/tst_kernels.cpp).
#pragma once

#include <torch/nn/modules/normalization.h>

namespace d2dpo {

/// (x - mean) / sqrt(var + eps) * weight + bias over the last dimension E of x [..., E];
/// weight, bias [E]. Differentiable in all three. CPU float/double tensors take the kernel; any
/// other device or dtype takes torch::layer_norm.
at::Tensor layerNorm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, double eps);

/// A LibTorch LayerNorm module's normalization (over its last dimension, with its weight, bias
/// and eps) through layerNorm: the module keeps the parameters and their names in checkpoints.
at::Tensor layerNorm(const torch::nn::LayerNorm& norm, const at::Tensor& x);

} // namespace d2dpo
