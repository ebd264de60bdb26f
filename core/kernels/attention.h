// SPDX-License-Identifier: GPL-3.0-or-later
// Bidirectional multi-head self-attention over a packed [B, D, 3E] q|k|v projection.
//
// Why a kernel of its own: LibTorch 1.13 computes a CPU batched matmul of small matrices as one
// BLAS call per matrix (a select and an addmm each), so the denoiser's [B*H, 16, 16] attention
// products cost ~1 ms each at the small setting, a third of a D2-DPO step (bench/NOTES.md,
// change 4). This kernel loops over (batch, head) itself, reads q, k and v where the projection
// wrote them (no permute copies) and writes the merged [B, D, E] output directly; its backward
// is written out by hand. The softmax runs inside it too, on probabilities kept key-major so
// that every reduction is a vector operation (change 8). Same mathematics, different summation
// order: it agrees with referenceSelfAttention to rounding (tests/core/tst_attention.cpp).
#pragma once

#include <cstdint>

namespace at {
class Tensor;
}

namespace d2dpo {

/// qkv [B, D, 3E] (q, then k, then v, each E = heads x head width) -> [B, D, E], softmax(q k^T /
/// sqrt(E/heads)) v per head. Differentiable. CPU float/double tensors take the fused kernel; any
/// other device or dtype takes referenceSelfAttention.
at::Tensor selfAttention(const at::Tensor& qkv, int64_t heads);
/// The same with the scores q k^T multiplied by `scale` instead of 1 / sqrt(E/heads).
at::Tensor selfAttention(const at::Tensor& qkv, int64_t heads, double scale);

/// Whether the kernel runs attention over heads `width` wide faster than LibTorch's batched
/// products at protein lengths (~150), forward and backward: 8, 16, 24 and 32, the widths it is
/// compiled for (its loops over a head then stay in vector registers). Measured at 20 heads and
/// length 152 (forward and backward, 1 thread): 2.5x at 16, 1.5x at 24 and 32; at 48 level, at
/// 64 0.9x, at 12 (no compiled width) 0.55x.
bool kernelBeatsBatchedProducts(int64_t width);

/// The same attention for some query positions only: q [P, E] holds the queries at the strictly
/// ascending flat positions `rows` [P] into [B * N]; kv [B, N, 2E] holds every position's keys,
/// then values. -> [P, E], row p equal to selfAttention's output at rows[p]. Differentiable in q
/// and kv. What a block needs when only some positions' outputs are read (forwardRows): the
/// queries and their scores at the other positions are never computed.
at::Tensor attentionAt(const at::Tensor& q, const at::Tensor& kv, const at::Tensor& rows, int64_t heads);

/// attentionAt through referenceSelfAttention (queries scattered into a full qkv).
at::Tensor referenceAttentionAt(const at::Tensor& q, const at::Tensor& kv, const at::Tensor& rows, int64_t heads);

/// The same attention written with LibTorch matmuls (the formulation the model was first
/// written in; what the peer benchmark runs, and what the tests hold the kernel to).
at::Tensor referenceSelfAttention(const at::Tensor& qkv, int64_t heads);
at::Tensor referenceSelfAttention(const at::Tensor& qkv, int64_t heads, double scale);

} // namespace d2dpo
