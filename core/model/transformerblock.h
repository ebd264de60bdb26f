// SPDX-License-Identifier: GPL-3.0-or-later
// One pre-norm transformer encoder block over [B, D, E] (batch first), bidirectional attention.
// Written here because LibTorch 1.13's TransformerEncoderLayer is sequence-first and post-norm.
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

namespace d2dpo {

/// A linear layer at the thread's matrix precision (kernels/matmulprecision.h); under float32
/// exactly the layer's own forward.
torch::Tensor linearAt(const torch::nn::Linear& layer, const torch::Tensor& x);

class TransformerBlockImpl : public torch::nn::Cloneable<TransformerBlockImpl> {
public:
    TransformerBlockImpl(int64_t dModel, int64_t heads, int64_t ffWidth);

    void reset() override;
    /// x [B, D, E] float -> [B, D, E] float.
    torch::Tensor forward(const torch::Tensor& x);
    /// The output at some positions only: rows are strictly ascending flat indices into [B * D];
    /// -> [P, E]. Keys and values still come from every position; the query side (query
    /// projection, attention, output projection, residual and feed-forward) runs on the P rows
    /// alone (attentionAt).
    torch::Tensor forwardRows(const torch::Tensor& x, const torch::Tensor& rows);

    int64_t dModel;
    int64_t heads;
    int64_t ffWidth;

private:
    torch::Tensor attention(const torch::Tensor& x);   ///< [B, D, E] -> attended [B * D, E]
    torch::Tensor feedForward(const torch::Tensor& h); ///< [P, E] -> ff2(gelu(ff1(norm2(h))))

    torch::nn::LayerNorm m_norm1{nullptr};
    torch::nn::Linear m_qkv{nullptr};
    torch::nn::Linear m_out{nullptr};
    torch::nn::LayerNorm m_norm2{nullptr};
    torch::nn::Linear m_ff1{nullptr};
    torch::nn::Linear m_ff2{nullptr};
};
TORCH_MODULE(TransformerBlock);

} // namespace d2dpo
