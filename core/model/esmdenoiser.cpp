// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/esmdenoiser.h"

#include <cmath>
#include <regex>

#include <torch/torch.h>

#include "kernels/attention.h"
#include "kernels/gelu.h"
#include "kernels/layernorm.h"
#include "kernels/onednnlinear.h"
#include "kernels/rotary.h"
#include "model/flatpositions.h"
#include "model/publishedslots.h"

namespace d2dpo {

namespace {

/// ESM's training masked 15% of positions and replaced 80% of those by <mask>: token dropout
/// scales embeddings as if that share had been dropped (modeling_esm.py, EsmEmbeddings).
constexpr double kMaskRatioTrain = 0.15 * 0.8;

/// Tensors a published file carries beside the weights that the masked LM does not compute with:
/// kept and written back as read.
bool isPassenger(const std::string& name, const std::string& prefix)
{
    static const std::regex passenger(R"(esm\.(contact_head\.regression\.(weight|bias)|embeddings\.position_ids|)"
                                      R"(pooler\.dense\.(weight|bias)|)"
                                      R"(encoder\.layer\.\d+\.attention\.self\.rotary_embeddings\.inv_freq))");
    return name.rfind(prefix, 0) == 0 && std::regex_match(name.substr(prefix.size()), passenger);
}

/// Every weight of the network, in the order transformers' state dict lists them, with its shape.
std::vector<std::pair<std::string, std::vector<int64_t>>> weightShapes(const EsmArchitecture& a, const std::string& p)
{
    const int64_t e = a.hidden, v = a.vocabSize, ff = a.intermediate;
    std::vector<std::pair<std::string, std::vector<int64_t>>> out;
    const auto norm = [&](const std::string& name) {
        out.push_back({name + ".weight", {e}});
        out.push_back({name + ".bias", {e}});
    };
    const auto linear = [&](const std::string& name, int64_t outputs, int64_t inputs) {
        out.push_back({name + ".weight", {outputs, inputs}});
        out.push_back({name + ".bias", {outputs}});
    };
    out.push_back({p + "esm.embeddings.word_embeddings.weight", {v, e}});
    if (a.embLayerNormBefore)
        norm(p + "esm.embeddings.layer_norm");
    for (int64_t i = 0; i < a.layers; ++i) {
        const std::string base = p + "esm.encoder.layer." + std::to_string(i) + ".";
        linear(base + "attention.self.query", e, e);
        linear(base + "attention.self.key", e, e);
        linear(base + "attention.self.value", e, e);
        linear(base + "attention.output.dense", e, e);
        norm(base + "attention.LayerNorm");
        linear(base + "intermediate.dense", ff, e);
        linear(base + "output.dense", e, ff);
        norm(base + "LayerNorm");
    }
    norm(p + "esm.encoder.emb_layer_norm_after");
    linear(p + "lm_head.dense", e, e);
    norm(p + "lm_head.layer_norm");
    out.push_back({p + "lm_head.bias", {v}});
    if (!a.tiedEmbeddings)
        out.push_back({p + "lm_head.decoder.weight", {v, e}});
    return out;
}

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b)
{
    return onednnLinear(x, w, b);
}

} // namespace

EsmDenoiser::EsmDenoiser(EsmArchitecture architecture, const ModelVocabulary& vocabulary, int64_t length,
                         std::string prefix)
    : PublishedDenoiser(vocabulary, length, std::move(prefix))
    , m_architecture(architecture)
{
}

Result<std::shared_ptr<EsmDenoiser>> EsmDenoiser::fromWeights(const EsmArchitecture& architecture,
                                                              const ModelVocabulary& vocabulary, int64_t length,
                                                              const std::string& prefix,
                                                              std::vector<std::pair<std::string, torch::Tensor>> tensors)
{
    const int64_t ids = length + int64_t(vocabulary.begin.size() + vocabulary.end.size());
    if (ids > architecture.maxPositions)
        return makeError("its sequences of " + std::to_string(length) + " positions and " +
                         std::to_string(ids - length) + " frame ids exceed its max_position_embeddings (" +
                         std::to_string(architecture.maxPositions) + ")");
    if (vocabulary.largestId() >= architecture.vocabSize)
        return makeError("its vocabulary names id " + std::to_string(vocabulary.largestId()) +
                         ", beyond the network's " + std::to_string(architecture.vocabSize) + " ids");
    if (architecture.tokenDropout && vocabulary.maskId != architecture.maskTokenId)
        return makeError("its vocabulary's mask id (" + std::to_string(vocabulary.maskId) +
                         ") is not the config's mask_token_id (" + std::to_string(architecture.maskTokenId) +
                         "), which token dropout reads");
    std::shared_ptr<EsmDenoiser> model(new EsmDenoiser(architecture, vocabulary, length, prefix));
    const std::string tiedDecoder = prefix + "lm_head.decoder.weight";
    PublishedSlots slots{weightShapes(architecture, prefix),
                         [&](const std::string& name) { return isPassenger(name, prefix); },
                         // tied: the word embeddings are the decoder
                         [&](const std::string& name) { return architecture.tiedEmbeddings && name == tiedDecoder; },
                         prefix};
    auto taken = takePublishedTensors(slots, std::move(tensors));
    if (!taken)
        return makeError(taken.error());
    model->m_parameters = std::move(taken->parameters);
    model->m_passengers = std::move(taken->passengers);
    model->bind();
    return model;
}

void EsmDenoiser::bind()
{
    const auto norm = [&](const std::string& name) { return Norm{at(name + ".weight"), at(name + ".bias")}; };
    const auto lin = [&](const std::string& name) { return Linear{at(name + ".weight"), at(name + ".bias")}; };
    m_words = at("esm.embeddings.word_embeddings.weight");
    if (m_architecture.embLayerNormBefore)
        m_embeddingNorm = norm("esm.embeddings.layer_norm");
    m_layers.clear();
    for (int64_t i = 0; i < m_architecture.layers; ++i) {
        const std::string base = "esm.encoder.layer." + std::to_string(i) + ".";
        m_layers.push_back(Layer{norm(base + "attention.LayerNorm"), lin(base + "attention.self.query"),
                                 lin(base + "attention.self.key"), lin(base + "attention.self.value"),
                                 lin(base + "attention.output.dense"), norm(base + "LayerNorm"),
                                 lin(base + "intermediate.dense"), lin(base + "output.dense")});
    }
    m_finalNorm = norm("esm.encoder.emb_layer_norm_after");
    m_headDense = lin("lm_head.dense");
    m_headNorm = norm("lm_head.layer_norm");
    m_headBias = at("lm_head.bias");
    m_decoder = m_architecture.tiedEmbeddings ? m_words : at("lm_head.decoder.weight");
}

torch::Tensor EsmDenoiser::norm(const Norm& n, const torch::Tensor& x) const
{
    return layerNorm(x, n.weight, n.bias, m_architecture.layerNormEps);
}

torch::Tensor EsmDenoiser::embed(const torch::Tensor& ids) const
{
    auto h = torch::embedding(m_words, ids);
    if (m_architecture.tokenDropout) {
        const auto masked = ids.eq(m_architecture.maskTokenId);
        const auto observed = masked.sum(-1).to(h.scalar_type()) / double(ids.size(1));
        h = h.masked_fill(masked.unsqueeze(-1), 0.0) * ((1 - kMaskRatioTrain) / (1 - observed)).view({-1, 1, 1});
    }
    if (m_architecture.embLayerNormBefore)
        h = norm(m_embeddingNorm, h);
    return h;
}

torch::Tensor EsmDenoiser::layer(const Layer& l, const torch::Tensor& x) const
{
    const int64_t b = x.size(0), n = x.size(1), e = m_architecture.hidden;
    const auto a = norm(l.attentionNorm, x.reshape({-1, e}));
    const auto qkv = linear(a, torch::cat({l.query.weight, l.key.weight, l.value.weight}),
                            torch::cat({l.query.bias, l.key.bias, l.value.bias}))
                         .view({b, n, 3 * e});
    // RoFormer's rotation as ESM computes it, on q and k (kernels/rotary.h); v passes through.
    const auto packed = rotaryEmbedding(qkv, 2 * e, m_architecture.headWidth());
    // The scale 1/sqrt(w) is ESM's query scaling: rotation is linear, so scaling after it is the same.
    const auto attended = kernelBeatsBatchedProducts(m_architecture.headWidth())
                              ? selfAttention(packed, m_architecture.heads)
                              : referenceSelfAttention(packed, m_architecture.heads);
    const auto h = x.reshape({-1, e}) + linear(attended.reshape({-1, e}), l.output.weight, l.output.bias);
    return (h + feedForward(l, h)).view_as(x);
}

torch::Tensor EsmDenoiser::layerAt(const Layer& l, const torch::Tensor& x, const torch::Tensor& rows) const
{
    const int64_t b = x.size(0), n = x.size(1), e = m_architecture.hidden, w = m_architecture.headWidth();
    const auto a = norm(l.attentionNorm, x.reshape({-1, e}));
    auto q = linear(a.index_select(0, rows), l.query.weight, l.query.bias);
    const auto kv = linear(a, torch::cat({l.key.weight, l.value.weight}), torch::cat({l.key.bias, l.value.bias}))
                        .view({b, n, 2 * e});
    const auto keysValues = rotaryEmbedding(kv, e, w);
    // Each query turned by its own position's angles.
    q = rotaryEmbeddingAt(q, rows.remainder(n), w);
    const auto attended = attentionAt(q, keysValues, rows, m_architecture.heads);
    const auto h = x.reshape({-1, e}).index_select(0, rows) + linear(attended, l.output.weight, l.output.bias);
    return h + feedForward(l, h);
}

torch::Tensor EsmDenoiser::feedForward(const Layer& l, const torch::Tensor& h) const
{
    const auto up = exactGelu(linear(norm(l.feedForwardNorm, h), l.intermediate.weight, l.intermediate.bias));
    return linear(up, l.down.weight, l.down.bias);
}

torch::Tensor EsmDenoiser::head(const torch::Tensor& h, bool realOnly) const
{
    const auto features = norm(m_headNorm, exactGelu(linear(h, m_headDense.weight, m_headDense.bias)));
    if (!realOnly)
        return linear(features, m_decoder, m_headBias);
    const auto& ids = m_frame.realIds();
    return linear(features, m_decoder.index_select(0, ids), m_headBias.index_select(0, ids));
}

torch::Tensor EsmDenoiser::modelLogits(const torch::Tensor& ids)
{
    auto h = embed(ids);
    for (const Layer& l : m_layers)
        h = layer(l, h);
    return head(norm(m_finalNorm, h), /*realOnly=*/false);
}

torch::Tensor EsmDenoiser::forward(const torch::Tensor& tokens, const torch::Tensor& /*t*/)
{
    auto h = embed(m_frame.modelIds(tokens));
    for (const Layer& l : m_layers)
        h = layer(l, h);
    return head(norm(m_finalNorm, m_frame.taskPositions(h, tokens.size(1))), /*realOnly=*/true);
}

torch::Tensor EsmDenoiser::forwardAt(const torch::Tensor& tokens, const torch::Tensor& /*t*/,
                                     const torch::Tensor& positions)
{
    const int64_t length = tokens.size(1);
    const int64_t ids = length + m_frame.before() + m_frame.after();
    // The sequences that hold a requested position, and each position's row among their ids.
    const auto [sequences, sequenceOfRow, counts] =
        torch::unique_consecutive(sequenceOfPosition(positions, length), /*return_inverse=*/true);
    const auto rows = sequenceOfRow * ids + m_frame.before() + positions.remainder(length);
    auto h = embed(m_frame.modelIds(tokens.index_select(0, sequences)));
    for (size_t i = 0; i + 1 < m_layers.size(); ++i)
        h = layer(m_layers[i], h);
    return head(norm(m_finalNorm, layerAt(m_layers.back(), h, rows)), /*realOnly=*/true);
}

std::shared_ptr<PublishedDenoiser> EsmDenoiser::emptyCopy() const
{
    return std::shared_ptr<EsmDenoiser>(new EsmDenoiser(m_architecture, m_vocabulary, length(), m_prefix));
}

} // namespace d2dpo
