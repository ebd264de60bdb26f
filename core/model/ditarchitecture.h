// SPDX-License-Identifier: GPL-3.0-or-later
// The shape of MDLM's diffusion transformer (Sahoo et al. 2024, kuleshov-group/mdlm's DIT, as its
// Hugging Face release saves it), read from the `config.json` beside the weights (MDLMConfig,
// model_type "mdlm"): vocab_size, model_length, hidden_dim, cond_dim, n_blocks, n_heads and
// time_conditioning. The feed-forward is 4x wide and the time embedding 256 frequencies wide, as
// MDLM fixes them. MDLM's config names no mask id (its tokenizer's [MASK], or one id appended after
// the tokenizer's: model/ditvocabulary.h); one that does is held to it. Block diffusion's configs (BD3LM:
// cross_attn, adaln off, causal attention) compute something else and are refused. Torch-free.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"

namespace d2dpo {

struct DitArchitecture {
    int64_t hidden = 0;            ///< hidden_dim E
    int64_t blocks = 0;            ///< n_blocks
    int64_t heads = 0;             ///< n_heads (head width E / heads)
    int64_t condition = 0;         ///< cond_dim: the time embedding's width
    int64_t vocabSize = 0;         ///< vocab_size V, the mask included
    int64_t modelLength = 0;       ///< model_length: the longest sequence it was trained on
    int64_t maskTokenId = -1;      ///< mask_token_id; -1: the config names none
    bool timeConditioning = false; ///< time_conditioning: the blocks read sigma(t); off: sigma = 0

    static constexpr int64_t kMlpRatio = 4;
    static constexpr int64_t kFrequencies = 256; ///< TimestepEmbedder's frequency_embedding_size
    static constexpr double kLayerNormEps = 1e-5; ///< F.layer_norm's default, as MDLM calls it

    int64_t headWidth() const { return hidden / heads; }
};

/// Reads `config.json`'s text; the error names the key that is missing or out of range.
Result<DitArchitecture> ditArchitecture(const std::string& configJson);

/// The parameter count of the network `a` describes.
int64_t ditParameterCount(const DitArchitecture& a);

} // namespace d2dpo
