// SPDX-License-Identifier: GPL-3.0-or-later
// The shape of an ESM-family network (ESM2, and DPLM, which is ESM2 trained as a masked diffusion
// model), read from the `config.json` that `transformers` writes beside the weights
// (EsmConfig). Only what the network computes is read; what it ignores (dropout, which the
// published configs set to 0, and the contact head's use) is not. A config this product cannot
// compute exactly is refused with a sentence: absolute or relative positions (ESM-1b), a decoder,
// cross-attention. Torch-free: the model's spec stores the config's text.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"

namespace d2dpo {

struct EsmArchitecture {
    int64_t hidden = 0;            ///< hidden_size E
    int64_t layers = 0;            ///< num_hidden_layers
    int64_t heads = 0;             ///< num_attention_heads (head width E / heads)
    int64_t intermediate = 0;      ///< intermediate_size
    int64_t vocabSize = 0;         ///< vocab_size V (33 for ESM2)
    int64_t maxPositions = 0;      ///< max_position_embeddings: ids per sequence, frame included
    double layerNormEps = 1e-5;
    bool tokenDropout = false;     ///< rescale embeddings by the share of masked ids (ESM's token dropout)
    bool embLayerNormBefore = false;
    bool tiedEmbeddings = true;    ///< tie_word_embeddings: the LM head's decoder is the word embeddings
    int64_t maskTokenId = -1;
    int64_t padTokenId = -1;

    int64_t headWidth() const { return hidden / heads; }
};

/// Reads `config.json`'s text; the error names the key that is missing or out of range.
Result<EsmArchitecture> esmArchitecture(const std::string& configJson);

/// The parameter count of the network `a` describes (the tied decoder counted once).
int64_t esmParameterCount(const EsmArchitecture& a);

} // namespace d2dpo
