// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/esmarchitecture.h"

#include <tuple>

#include "base/untrustedtext.h"
#include "model/configfields.h"

namespace d2dpo {

namespace {

/// The largest sizes read: ESM2's largest published model (15B) has 48 layers of width 5120; the
/// bounds keep a crafted config from asking for a network no machine holds before a byte is allocated.
constexpr int64_t kMaxHidden = 8192;
constexpr int64_t kMaxLayers = 128;
constexpr int64_t kMaxVocabulary = 1 << 20;
constexpr int64_t kMaxPositions = 1 << 16;

} // namespace

Result<EsmArchitecture> esmArchitecture(const std::string& configJson)
{
    auto parsed = parseModelConfig(configJson);
    if (!parsed)
        return makeError(parsed.error());
    const nlohmann::json& j = parsed.value();
    const std::string positions = j.value("position_embedding_type", std::string("absolute"));
    if (positions != "rotary")
        return makeError("its position embeddings are '" + excerpt(positions, 40) +
                         "'; the ESM2 family uses 'rotary' (ESM-1b's absolute positions are not supported)");
    if (j.value("is_decoder", false) || j.value("add_cross_attention", false))
        return makeError("it is configured as a decoder or with cross-attention; ESM2 and DPLM are encoders");
    if (j.value("is_folding_model", false))
        return makeError("it is ESMFold (a structure model); only ESM2-style masked language models are read");
    EsmArchitecture a;
    for (auto [key, out, low, high] : {std::tuple{"hidden_size", &a.hidden, int64_t(2), kMaxHidden},
                                       std::tuple{"num_hidden_layers", &a.layers, int64_t(1), kMaxLayers},
                                       std::tuple{"num_attention_heads", &a.heads, int64_t(1), kMaxHidden},
                                       std::tuple{"intermediate_size", &a.intermediate, int64_t(1), 8 * kMaxHidden},
                                       std::tuple{"vocab_size", &a.vocabSize, int64_t(2), kMaxVocabulary},
                                       std::tuple{"max_position_embeddings", &a.maxPositions, int64_t(3), kMaxPositions}}) {
        auto v = configCount(j, key, low, high);
        if (!v)
            return makeError(v.error());
        *out = v.value();
    }
    if (a.hidden % a.heads != 0 || a.headWidth() % 2 != 0)
        return makeError("its hidden_size (" + std::to_string(a.hidden) + ") must split into " + std::to_string(a.heads) +
                         " heads of an even width (rotary embeddings rotate pairs)");
    auto mask = configCount(j, "mask_token_id", 0, a.vocabSize - 1);
    if (!mask)
        return makeError(mask.error());
    a.maskTokenId = mask.value();
    if (j.contains("pad_token_id") && !j.at("pad_token_id").is_null()) {
        auto pad = configCount(j, "pad_token_id", 0, a.vocabSize - 1);
        if (!pad)
            return makeError(pad.error());
        a.padTokenId = pad.value();
    }
    for (auto [key, out, fallback] : {std::tuple{"token_dropout", &a.tokenDropout, false},
                                      std::tuple{"emb_layer_norm_before", &a.embLayerNormBefore, false},
                                      std::tuple{"tie_word_embeddings", &a.tiedEmbeddings, true}}) {
        auto v = configFlag(j, key, fallback);
        if (!v)
            return makeError(v.error());
        *out = v.value();
    }
    if (j.contains("layer_norm_eps")) {
        const auto& eps = j.at("layer_norm_eps");
        if (!eps.is_number() || !(eps.get<double>() > 0) || eps.get<double>() > 1)
            return makeError("its config.json's \"layer_norm_eps\" must be a number in (0, 1]");
        a.layerNormEps = eps.get<double>();
    }
    return a;
}

int64_t esmParameterCount(const EsmArchitecture& a)
{
    const int64_t e = a.hidden;
    const int64_t norm = 2 * e;
    const int64_t layer = norm + 4 * (e * e + e) + norm + (e * a.intermediate + a.intermediate) + (a.intermediate * e + e);
    return a.vocabSize * e + (a.embLayerNormBefore ? norm : 0) + a.layers * layer + norm + (e * e + e) + norm +
           a.vocabSize + (a.tiedEmbeddings ? 0 : a.vocabSize * e);
}

} // namespace d2dpo
