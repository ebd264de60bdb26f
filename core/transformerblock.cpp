#include "transformerblock.h"

#include <cmath>

#include <torch/torch.h>

namespace d2dpo {

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

torch::Tensor TransformerBlockImpl::forward(const torch::Tensor& x)
{
    const int64_t batch = x.size(0);
    const int64_t length = x.size(1);
    const int64_t headDim = dModel / heads;

    // [B, D, 3E] -> 3 x [B, H, D, E/H]
    const auto qkv = m_qkv->forward(m_norm1->forward(x)).view({batch, length, 3, heads, headDim}).permute({2, 0, 3, 1, 4});
    const auto scores = torch::matmul(qkv[0], qkv[1].transpose(-2, -1)) * (1.0 / std::sqrt(double(headDim)));
    const auto attended = torch::matmul(scores.softmax(-1), qkv[2]);          // [B, H, D, E/H]
    const auto merged = attended.transpose(1, 2).reshape({batch, length, dModel});
    const auto h = x + m_out->forward(merged);
    return h + m_ff2->forward(torch::gelu(m_ff1->forward(m_norm2->forward(h))));
}

} // namespace d2dpo
