#include "transformerblock.h"

#include <torch/torch.h>

#include "attention.h"

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
    const auto h = x + m_out->forward(selfAttention(m_qkv->forward(m_norm1->forward(x)), heads));
    return h + feedForward(h);
}

torch::Tensor TransformerBlockImpl::forwardRows(const torch::Tensor& x, const torch::Tensor& rows)
{
    const auto attended = selfAttention(m_qkv->forward(m_norm1->forward(x)), heads).reshape({-1, dModel});
    const auto h = x.reshape({-1, dModel}).index_select(0, rows) + m_out->forward(attended.index_select(0, rows));
    return h + feedForward(h);
}

torch::Tensor TransformerBlockImpl::feedForward(const torch::Tensor& h)
{
    return m_ff2->forward(torch::gelu(m_ff1->forward(m_norm2->forward(h))));
}

} // namespace d2dpo
