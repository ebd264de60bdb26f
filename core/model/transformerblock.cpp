// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/transformerblock.h"

#include <torch/torch.h>

#include "kernels/attention.h"
#include "kernels/gelu.h"
#include "kernels/layernorm.h"
#include "kernels/onednnlinear.h"

namespace d2dpo {

torch::Tensor linearAt(const torch::nn::Linear& layer, const torch::Tensor& x)
{
    return linearAtPrecision(x, layer->weight, layer->bias);
}

TransformerBlockImpl::TransformerBlockImpl(int64_t dModel, int64_t heads, int64_t ffWidth)
    : dModel(dModel)
    , heads(heads)
    , ffWidth(ffWidth)
{
    reset();
}

void TransformerBlockImpl::reset()
{
    m_norm1 = register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dModel})));
    m_qkv = register_module("qkv", torch::nn::Linear(dModel, 3 * dModel));
    m_out = register_module("out", torch::nn::Linear(dModel, dModel));
    m_norm2 = register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dModel})));
    m_ff1 = register_module("ff1", torch::nn::Linear(dModel, ffWidth));
    m_ff2 = register_module("ff2", torch::nn::Linear(ffWidth, dModel));
}

// Every linear layer sees [B * D, E] rows: LibTorch 1.13 runs a linear on a 3-D input as a
// matmul followed by a separate pass adding the bias, on a 2-D input as one addmm that folds the
// bias into the matrix product.

torch::Tensor TransformerBlockImpl::forward(const torch::Tensor& x)
{
    const auto h = x.reshape({-1, dModel}) + linearAt(m_out, attention(x));
    return (h + feedForward(h)).view_as(x);
}

torch::Tensor TransformerBlockImpl::forwardRows(const torch::Tensor& x, const torch::Tensor& rows)
{
    // Keys and values at every position, queries only at the rows: the query projection and the
    // attention of the other positions are never computed.
    const auto normed = layerNorm(m_norm1, x.reshape({-1, dModel}));
    const auto& weight = m_qkv->weight;
    const auto& bias = m_qkv->bias;
    const auto q = linearAtPrecision(normed.index_select(0, rows), weight.narrow(0, 0, dModel), bias.narrow(0, 0, dModel));
    const auto kv = linearAtPrecision(normed, weight.narrow(0, dModel, 2 * dModel), bias.narrow(0, dModel, 2 * dModel));
    const auto attended = attentionAt(q, kv.view({x.size(0), x.size(1), 2 * dModel}), rows, heads);
    const auto h = x.reshape({-1, dModel}).index_select(0, rows) + linearAt(m_out, attended);
    return h + feedForward(h);
}

torch::Tensor TransformerBlockImpl::attention(const torch::Tensor& x)
{
    const auto qkv = linearAt(m_qkv, layerNorm(m_norm1, x.reshape({-1, dModel})));
    return selfAttention(qkv.view({x.size(0), x.size(1), 3 * dModel}), heads).view({-1, dModel});
}

torch::Tensor TransformerBlockImpl::feedForward(const torch::Tensor& h)
{
    return linearAt(m_ff2, exactGelu(linearAt(m_ff1, layerNorm(m_norm2, h))));
}

} // namespace d2dpo
