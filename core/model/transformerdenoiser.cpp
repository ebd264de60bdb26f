// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/transformerdenoiser.h"

#include <cmath>

#include <torch/torch.h>

#include "model/flatpositions.h"
#include "kernels/layernorm.h"
#include "model/transformerblock.h"

namespace d2dpo {

TransformerNetImpl::TransformerNetImpl(DenoiserOptions options) : options(std::move(options)) { reset(); }

void TransformerNetImpl::reset()
{
    const int64_t e = options.d_model();
    m_tokens = register_module("tokens", torch::nn::Embedding(options.vocab_size() + 1, e));
    m_positions = register_module("positions", torch::nn::Embedding(options.length(), e));
    if (options.time_conditioning()) {
        m_time1 = register_module("time1", torch::nn::Linear(e, e));
        m_time2 = register_module("time2", torch::nn::Linear(e, e));
    }
    m_blocks = register_module("blocks", torch::nn::ModuleList());
    for (int64_t i = 0; i < options.layers(); ++i)
        m_blocks->push_back(TransformerBlock(e, options.heads(), options.ff_multiplier() * e));
    m_norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({e})));
    m_head = register_module("head", torch::nn::Linear(e, options.vocab_size()));
    m_positionIds = register_buffer("position_ids", torch::arange(options.length(), torch::kLong));
    // Small embeddings keep the first residual stream on the scale of the block outputs.
    torch::NoGradGuard noGrad;
    m_tokens->weight.normal_(0, 0.02);
    m_positions->weight.normal_(0, 0.02);
}

torch::Tensor TransformerNetImpl::timeEmbedding(const torch::Tensor& t)
{
    // Sinusoidal features of 1000 t (as for DDPM timesteps), then a two-layer MLP.
    const int64_t half = options.d_model() / 2;
    const auto freqs = torch::exp(torch::arange(half, t.options()) * (-std::log(10000.0) / double(half)));
    const auto args = (t * 1000).unsqueeze(1) * freqs.unsqueeze(0);
    auto features = torch::cat({args.sin(), args.cos()}, 1);
    if (features.size(1) < options.d_model())
        features = torch::nn::functional::pad(features, torch::nn::functional::PadFuncOptions({0, 1}));
    return linearAt(m_time2, torch::silu(linearAt(m_time1, features)));
}

torch::Tensor TransformerNetImpl::embed(const torch::Tensor& tokens, const torch::Tensor& t)
{
    // LibTorch's Module::to(dtype) converts integer buffers too; indices must stay int64.
    auto h = m_tokens->forward(tokens) + m_positions->forward(m_positionIds.to(torch::kLong)).unsqueeze(0);
    if (options.time_conditioning())
        h = h + timeEmbedding(t).unsqueeze(1);
    return h;
}

torch::Tensor TransformerNetImpl::forward(const torch::Tensor& tokens, const torch::Tensor& t)
{
    auto h = embed(tokens, t);
    for (const auto& block : *m_blocks)
        h = block->as<TransformerBlock>()->forward(h);
    return linearAt(m_head, layerNorm(m_norm, h));
}

torch::Tensor TransformerNetImpl::forwardAt(const torch::Tensor& tokens, const torch::Tensor& t,
                                      const torch::Tensor& positions)
{
    const int64_t length = tokens.size(1);
    // The sequences that hold a requested position, and each position renumbered within them.
    const auto [rows, rowOfPosition, counts] =
        torch::unique_consecutive(sequenceOfPosition(positions, length), /*return_inverse=*/true);
    const auto within = rowOfPosition * length + positions.remainder(length);
    auto h = embed(tokens.index_select(0, rows), t.index_select(0, rows));
    const int64_t blocks = int64_t(m_blocks->size());
    if (blocks == 0)
        return linearAt(m_head, layerNorm(m_norm, h.reshape({-1, h.size(-1)}).index_select(0, within)));
    for (int64_t i = 0; i + 1 < blocks; ++i)
        h = m_blocks[i]->as<TransformerBlock>()->forward(h);
    return linearAt(m_head, layerNorm(m_norm, m_blocks[blocks - 1]->as<TransformerBlock>()->forwardRows(h, within)));
}

TransformerDenoiser::TransformerDenoiser(TransformerNet net)
    : DenoiserModel(net->options.length(), net->options.vocab_size()), m_net(std::move(net))
{
}

std::shared_ptr<DenoiserModel> TransformerDenoiser::deepCopy() const
{
    return std::make_shared<TransformerDenoiser>(
        TransformerNet(std::dynamic_pointer_cast<TransformerNetImpl>(m_net->clone())));
}

Denoiser makeDenoiser(const ModelSpec& spec, int64_t vocabSize, torch::Device device)
{
    TransformerNet net(DenoiserOptions(vocabSize, spec.task.length)
                           .d_model(spec.model.dModel)
                           .layers(spec.model.layers)
                           .heads(spec.model.heads)
                           .ff_multiplier(spec.model.ffMultiplier)
                           .time_conditioning(spec.model.timeConditioning));
    net->to(device);
    return std::make_shared<TransformerDenoiser>(std::move(net));
}

} // namespace d2dpo
