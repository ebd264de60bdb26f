// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/ditdenoiser.h"

#include <cmath>

#include <torch/torch.h>

#include "kernels/attention.h"
#include "kernels/layernorm.h"
#include "kernels/onednnlinear.h"
#include "kernels/rotary.h"
#include "model/flatpositions.h"
#include "model/publishedslots.h"

namespace d2dpo {

namespace {

/// MDLM's log-linear schedule keeps this much of the data at its time 1 (noise_schedule.py).
constexpr double kScheduleEps = 1e-3;

/// Every weight of the network, in the order MDLM's state dict lists them, with its shape.
std::vector<std::pair<std::string, std::vector<int64_t>>> weightShapes(const DitArchitecture& a, const std::string& p)
{
    const int64_t e = a.hidden, c = a.condition, v = a.vocabSize, ff = DitArchitecture::kMlpRatio * e;
    std::vector<std::pair<std::string, std::vector<int64_t>>> out{
        {p + "vocab_embed.embedding", {v, e}},
        {p + "sigma_map.mlp.0.weight", {c, DitArchitecture::kFrequencies}},
        {p + "sigma_map.mlp.0.bias", {c}},
        {p + "sigma_map.mlp.2.weight", {c, c}},
        {p + "sigma_map.mlp.2.bias", {c}}};
    for (int64_t i = 0; i < a.blocks; ++i) {
        const std::string b = p + "blocks." + std::to_string(i) + ".";
        out.insert(out.end(), {{b + "norm1.weight", {e}},
                               {b + "attn_qkv.weight", {3 * e, e}},
                               {b + "attn_out.weight", {e, e}},
                               {b + "norm2.weight", {e}},
                               {b + "mlp.0.weight", {ff, e}},
                               {b + "mlp.0.bias", {ff}},
                               {b + "mlp.2.weight", {e, ff}},
                               {b + "mlp.2.bias", {e}},
                               {b + "adaLN_modulation.weight", {6 * e, c}},
                               {b + "adaLN_modulation.bias", {6 * e}}});
    }
    out.insert(out.end(), {{p + "output_layer.norm_final.weight", {e}},
                           {p + "output_layer.linear.weight", {v, e}},
                           {p + "output_layer.linear.bias", {v}},
                           {p + "output_layer.adaLN_modulation.weight", {2 * e, c}},
                           {p + "output_layer.adaLN_modulation.bias", {2 * e}}});
    return out;
}

/// x W^T (+ b) on the project's products (oneDNN or OpenBLAS; bf16 under --precision bf16).
torch::Tensor dense(const torch::Tensor& x, const torch::Tensor& w) { return onednnLinear(x, w, std::nullopt); }
torch::Tensor dense(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) { return onednnLinear(x, w, b); }

} // namespace

DitDenoiser::DitDenoiser(DitArchitecture architecture, const ModelVocabulary& vocabulary, int64_t length,
                         std::string prefix)
    : PublishedDenoiser(vocabulary, length, std::move(prefix))
    , m_architecture(architecture)
{
}

Result<std::shared_ptr<DitDenoiser>> DitDenoiser::fromWeights(const DitArchitecture& architecture,
                                                              const ModelVocabulary& vocabulary, int64_t length,
                                                              const std::string& prefix,
                                                              std::vector<std::pair<std::string, torch::Tensor>> tensors)
{
    const int64_t ids = length + int64_t(vocabulary.begin.size() + vocabulary.end.size());
    if (ids > architecture.modelLength)
        return makeError("its sequences of " + std::to_string(ids) + " ids exceed the config's model_length (" +
                         std::to_string(architecture.modelLength) + "), the longest it was trained on");
    if (vocabulary.largestId() >= architecture.vocabSize)
        return makeError("its vocabulary names id " + std::to_string(vocabulary.largestId()) +
                         ", beyond the network's " + std::to_string(architecture.vocabSize) + " ids");
    if (architecture.maskTokenId >= 0 && vocabulary.maskId != architecture.maskTokenId)
        return makeError("its vocabulary's mask id (" + std::to_string(vocabulary.maskId) +
                         ") is not the config's mask_token_id (" + std::to_string(architecture.maskTokenId) + ")");
    std::shared_ptr<DitDenoiser> model(new DitDenoiser(architecture, vocabulary, length, prefix));
    const std::string rotaryBuffer = prefix + "rotary_emb.inv_freq";
    PublishedSlots slots{weightShapes(architecture, prefix),
                         [&](const std::string& name) { return name == rotaryBuffer; }, {}, prefix};
    auto taken = takePublishedTensors(slots, std::move(tensors));
    if (!taken)
        return makeError(taken.error());
    model->m_parameters = std::move(taken->parameters);
    model->m_passengers = std::move(taken->passengers);
    model->bind();
    return model;
}

void DitDenoiser::bind()
{
    m_embedding = at("vocab_embed.embedding");
    m_time1 = at("sigma_map.mlp.0.weight");
    m_time1Bias = at("sigma_map.mlp.0.bias");
    m_time2 = at("sigma_map.mlp.2.weight");
    m_time2Bias = at("sigma_map.mlp.2.bias");
    m_blocks.clear();
    for (int64_t i = 0; i < m_architecture.blocks; ++i) {
        const std::string b = "blocks." + std::to_string(i) + ".";
        m_blocks.push_back(Block{at(b + "norm1.weight"), at(b + "attn_qkv.weight"), at(b + "attn_out.weight"),
                                 at(b + "norm2.weight"), at(b + "mlp.0.weight"), at(b + "mlp.0.bias"),
                                 at(b + "mlp.2.weight"), at(b + "mlp.2.bias"),
                                 Modulation{at(b + "adaLN_modulation.weight"), at(b + "adaLN_modulation.bias")}});
    }
    m_finalNorm = at("output_layer.norm_final.weight");
    m_finalLinear = at("output_layer.linear.weight");
    m_finalBias = at("output_layer.linear.bias");
    m_finalModulation = Modulation{at("output_layer.adaLN_modulation.weight"), at("output_layer.adaLN_modulation.bias")};
    // MDLM's TimestepEmbedder: exp(-ln(10000) i / half), computed in float32 as there.
    const int64_t half = DitArchitecture::kFrequencies / 2;
    m_frequencies = torch::exp(-std::log(10000.0) * torch::arange(half, torch::kFloat32) / double(half))
                        .to(m_embedding.device(), m_embedding.scalar_type());
    m_zeroBias = torch::zeros({m_architecture.hidden}, m_embedding.options().requires_grad(false));
}

torch::Tensor DitDenoiser::sigmaAt(const torch::Tensor& t) const
{
    const auto times = t.to(m_embedding.scalar_type());
    if (!m_architecture.timeConditioning)
        return torch::zeros_like(times);
    return -torch::log1p(-(1 - kScheduleEps) * (1 - times));
}

torch::Tensor DitDenoiser::condition(const torch::Tensor& sigma) const
{
    const auto args = sigma.to(m_frequencies.scalar_type()).unsqueeze(1) * m_frequencies.unsqueeze(0);
    const auto embedded = torch::cat({torch::cos(args), torch::sin(args)}, -1);
    const auto hidden = torch::silu(dense(embedded, m_time1, m_time1Bias));
    return torch::silu(dense(hidden, m_time2, m_time2Bias)); // DIT.forward: c = silu(sigma_map(sigma))
}

torch::Tensor DitDenoiser::modulatedNorm(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& shift,
                                         const torch::Tensor& scale) const
{
    return torch::addcmul(shift, layerNorm(x, w, m_zeroBias, DitArchitecture::kLayerNormEps), 1 + scale);
}

torch::Tensor DitDenoiser::mlp(const Block& b, const torch::Tensor& h) const
{
    return dense(torch::gelu(dense(h, b.up, b.upBias), "tanh"), b.down, b.downBias);
}

torch::Tensor DitDenoiser::block(const Block& b, const torch::Tensor& x, const torch::Tensor& c) const
{
    const int64_t batch = x.size(0), n = x.size(1), e = m_architecture.hidden, w = m_architecture.headWidth();
    // shift, scale and gate for attention, then for the MLP, each [B, 1, E]
    const auto mod = dense(c, b.modulation.weight, b.modulation.bias).unsqueeze(1).chunk(6, -1);
    const auto qkv = dense(modulatedNorm(x, b.norm1, mod[0], mod[1]), b.qkv).view({batch, n, 3 * e});
    const auto packed = rotaryEmbedding(qkv, 2 * e, w); // q and k turn; v passes
    const auto attended = kernelBeatsBatchedProducts(w) ? selfAttention(packed, m_architecture.heads)
                                                        : referenceSelfAttention(packed, m_architecture.heads);
    const auto h = torch::addcmul(x, mod[2], dense(attended.reshape({batch, n, e}), b.out));
    return torch::addcmul(h, mod[5], mlp(b, modulatedNorm(h, b.norm2, mod[3], mod[4])));
}

torch::Tensor DitDenoiser::blockAt(const Block& b, const torch::Tensor& x, const torch::Tensor& c,
                                   const torch::Tensor& rows, const torch::Tensor& sequence) const
{
    const int64_t batch = x.size(0), n = x.size(1), e = m_architecture.hidden, w = m_architecture.headWidth();
    const auto perSequence = dense(c, b.modulation.weight, b.modulation.bias);
    const auto mod = perSequence.unsqueeze(1).chunk(6, -1);                  // [B, 1, E] each
    const auto atRows = perSequence.index_select(0, sequence).chunk(6, -1); // [P, E] each
    const auto h = modulatedNorm(x, b.norm1, mod[0], mod[1]).reshape({-1, e});
    auto q = dense(h.index_select(0, rows), b.qkv.narrow(0, 0, e));
    const auto keysValues = rotaryEmbedding(dense(h, b.qkv.narrow(0, e, 2 * e)).view({batch, n, 2 * e}), e, w);
    q = rotaryEmbeddingAt(q, rows.remainder(n), w); // each query turned by its own position's angles
    const auto attended = attentionAt(q, keysValues, rows, m_architecture.heads);
    const auto r = torch::addcmul(x.reshape({-1, e}).index_select(0, rows), atRows[2], dense(attended, b.out));
    return torch::addcmul(r, atRows[5], mlp(b, modulatedNorm(r, b.norm2, atRows[3], atRows[4])));
}

torch::Tensor DitDenoiser::output(const torch::Tensor& h, const torch::Tensor& c, bool realOnly) const
{
    // c is already broadcast to h's rows: [B, 1, C] for [B, N, E], [P, C] for [P, E].
    const auto mod = dense(c, m_finalModulation.weight, m_finalModulation.bias).chunk(2, -1);
    const auto features = modulatedNorm(h, m_finalNorm, mod[0], mod[1]);
    if (!realOnly)
        return dense(features, m_finalLinear, m_finalBias);
    const auto& ids = m_frame.realIds();
    return dense(features, m_finalLinear.index_select(0, ids), m_finalBias.index_select(0, ids));
}

torch::Tensor DitDenoiser::modelLogits(const torch::Tensor& ids, const torch::Tensor& sigma)
{
    const auto c = condition(sigma);
    auto x = torch::embedding(m_embedding, ids);
    for (const Block& b : m_blocks)
        x = block(b, x, c);
    return output(x, c.unsqueeze(1), /*realOnly=*/false);
}

torch::Tensor DitDenoiser::forward(const torch::Tensor& tokens, const torch::Tensor& t)
{
    const auto c = condition(sigmaAt(t));
    auto x = torch::embedding(m_embedding, m_frame.modelIds(tokens));
    for (const Block& b : m_blocks)
        x = block(b, x, c);
    return output(m_frame.taskPositions(x, tokens.size(1)), c.unsqueeze(1), /*realOnly=*/true);
}

torch::Tensor DitDenoiser::forwardAt(const torch::Tensor& tokens, const torch::Tensor& t, const torch::Tensor& positions)
{
    const int64_t length = tokens.size(1);
    const int64_t ids = length + m_frame.before() + m_frame.after();
    // The sequences that hold a requested position, and each position's row among their ids.
    const auto [sequences, sequenceOfRow, counts] =
        torch::unique_consecutive(sequenceOfPosition(positions, length), /*return_inverse=*/true);
    const auto rows = sequenceOfRow * ids + m_frame.before() + positions.remainder(length);
    const auto c = condition(sigmaAt(t.index_select(0, sequences)));
    auto x = torch::embedding(m_embedding, m_frame.modelIds(tokens.index_select(0, sequences)));
    for (size_t i = 0; i + 1 < m_blocks.size(); ++i)
        x = block(m_blocks[i], x, c);
    const auto h = blockAt(m_blocks.back(), x, c, rows, sequenceOfRow);
    return output(h, c.index_select(0, sequenceOfRow), /*realOnly=*/true);
}

std::shared_ptr<PublishedDenoiser> DitDenoiser::emptyCopy() const
{
    return std::shared_ptr<DitDenoiser>(new DitDenoiser(m_architecture, m_vocabulary, length(), m_prefix));
}

} // namespace d2dpo
