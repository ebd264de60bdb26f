// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/ditarchitecture.h"

#include <tuple>

#include "model/configfields.h"

namespace d2dpo {

namespace {

/// Bounds that keep a crafted config from sizing a network no machine holds (MDLM's released
/// models: width 768, 12 blocks, 50258 ids, 1024 positions).
constexpr int64_t kMaxHidden = 8192;
constexpr int64_t kMaxBlocks = 128;
constexpr int64_t kMaxVocabulary = 1 << 20;
constexpr int64_t kMaxLength = 1 << 16;

} // namespace

Result<DitArchitecture> ditArchitecture(const std::string& configJson)
{
    auto parsed = parseModelConfig(configJson);
    if (!parsed)
        return makeError(parsed.error());
    const nlohmann::json& j = parsed.value();
    for (auto [key, meaning] : {std::pair{"cross_attn", "block diffusion (BD3LM)"},
                                std::pair{"causal", "causal attention"}})
        if (auto on = configFlag(j, key, false); !on)
            return makeError(on.error());
        else if (on.value())
            return makeError(std::string("its config.json turns on \"") + key + "\" (" + meaning +
                             "); d2dpo reads MDLM's bidirectional DiT only");
    if (auto adaln = configFlag(j, "adaln", true); !adaln)
        return makeError(adaln.error());
    else if (!adaln.value())
        return makeError("its config.json turns off \"adaln\"; MDLM's DiT conditions every block on time (adaLN)");
    DitArchitecture a;
    for (auto [key, out, low, high] : {std::tuple{"hidden_dim", &a.hidden, int64_t(2), kMaxHidden},
                                       std::tuple{"n_blocks", &a.blocks, int64_t(1), kMaxBlocks},
                                       std::tuple{"n_heads", &a.heads, int64_t(1), kMaxHidden},
                                       std::tuple{"cond_dim", &a.condition, int64_t(1), kMaxHidden},
                                       std::tuple{"vocab_size", &a.vocabSize, int64_t(3), kMaxVocabulary},
                                       std::tuple{"model_length", &a.modelLength, int64_t(1), kMaxLength}}) {
        auto v = configCount(j, key, low, high);
        if (!v)
            return makeError(v.error());
        *out = v.value();
    }
    if (a.hidden % a.heads != 0 || a.headWidth() % 2 != 0)
        return makeError("its hidden_dim (" + std::to_string(a.hidden) + ") must split into " + std::to_string(a.heads) +
                         " heads of an even width (rotary embeddings rotate pairs)");
    if (j.contains("mask_token_id") && !j.at("mask_token_id").is_null()) {
        auto mask = configCount(j, "mask_token_id", 0, a.vocabSize - 1);
        if (!mask)
            return makeError(mask.error());
        a.maskTokenId = mask.value();
    }
    auto timed = configFlag(j, "time_conditioning", false);
    if (!timed)
        return makeError(timed.error());
    a.timeConditioning = timed.value();
    return a;
}

int64_t ditParameterCount(const DitArchitecture& a)
{
    const int64_t e = a.hidden, c = a.condition, ff = DitArchitecture::kMlpRatio * e;
    const int64_t time = (DitArchitecture::kFrequencies * c + c) + (c * c + c);
    const int64_t block = e + 3 * e * e + e * e + e + (e * ff + ff) + (ff * e + e) + (c * 6 * e + 6 * e);
    const int64_t output = e + (a.vocabSize * e + a.vocabSize) + (c * 2 * e + 2 * e);
    return a.vocabSize * e + time + a.blocks * block + output;
}

} // namespace d2dpo
