// SPDX-License-Identifier: GPL-3.0-or-later
// The rotary position embedding (RoFormer's, as ESM2 and DPLM compute it) of packed projections,
// in one pass each way on the CPU.
//
// Why: written with LibTorch's generic operators, the rotation of q and k (halves swapped by a
// concatenation, a negation, two products and a sum, then the packed q|k|v concatenated again)
// reads and writes the projections about twelve times a layer, forward and backward; at the
// ESM2-35M shape these operators were most of the 16% of a D2-DPO step that LibTorch's generic
// code took (docs/benchmarks.md). This kernel reads each value once and writes it once.
#pragma once

#include <cstdint>

namespace at {
class Tensor;
}

namespace d2dpo {

/// x [B, L, C] float (C = the rotated columns, then the rest) -> the same shape: in each of the
/// first `rotated` columns' heads of width w, position n turns the pair (x_j, x_{j + w/2}) by
/// n inv_freq_j, inv_freq_j = 1 / 10000^(2j / w) in float32 (j < w/2); the other columns are copied. Differentiable in x (the gradient turns
/// back by the opposite angle). A CPU float32 x takes the kernel; anything else LibTorch's
/// operators, the same arithmetic.
at::Tensor rotaryEmbedding(const at::Tensor& x, int64_t rotated, int64_t headWidth);

/// The same rotation of rows [P, C] (every column in heads of width w), each row at its own
/// position (positions [P], int64): the queries of a subset forward. LibTorch's operators (a few
/// rows a layer).
at::Tensor rotaryEmbeddingAt(const at::Tensor& rows, const at::Tensor& positions, int64_t headWidth);

} // namespace d2dpo
