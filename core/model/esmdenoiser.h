// SPDX-License-Identifier: GPL-3.0-or-later
// ESM2 (and DPLM, the same network under the key prefix "net.") run natively from its published
// weights: no code of the model's author runs, only this file's arithmetic on tensors read as data.
// The network is `transformers`' EsmForMaskedLM (models/esm/modeling_esm.py), computed with the
// project's kernels:
//   embeddings: word embeddings; with token_dropout, zero at <mask> ids and the rest scaled by
//     (1 - 0.15 * 0.8) / (1 - the sequence's share of <mask> ids); with emb_layer_norm_before, a
//     LayerNorm;
//   each layer (pre-LayerNorm): x += W_o attn(rotary(q / sqrt(w)), rotary(k), v) over the
//     attention LayerNorm of x; x += W_2 gelu(W_1 LayerNorm(x)), GELU in its erf form;
//   emb_layer_norm_after, then the LM head: dense, GELU, LayerNorm, the decoder (tied to the
//     word embeddings unless tie_word_embeddings is false) plus its bias.
// Every position attends to every other, frame and pads included, as transformers computes it
// with no attention_mask. Dropout is not applied (the published configs set it to 0).
//
// Parameters are named as the file names them (named_parameters() gives "esm.encoder.layer.0.
// attention.self.query.weight"), so a checkpoint, an export and low-rank adapters' patterns read as
// the user's own state dict. Tensors the network does not compute with but the file carries (the
// contact head, rotary inv_freq buffers, position_ids) travel as buffers and are written back as read.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/modelvocabulary.h"
#include "base/result.h"
#include "model/esmarchitecture.h"
#include "model/publisheddenoiser.h"

namespace d2dpo {

class EsmDenoiser final : public PublishedDenoiser {
public:
    /// The network `architecture` describes with the file's tensors (`prefix` before every key:
    /// "" for ESM2, "net." for DPLM), for a task of `length` positions framed and mapped by
    /// `vocabulary`. Every weight must be there with its shape and a float type (F32, F16 and BF16
    /// are read as float32); a tensor that is neither a weight nor a known passenger is refused,
    /// as are non-finite weights and a length beyond the config's max_position_embeddings.
    static Result<std::shared_ptr<EsmDenoiser>> fromWeights(const EsmArchitecture& architecture,
                                                            const ModelVocabulary& vocabulary, int64_t length,
                                                            const std::string& prefix,
                                                            std::vector<std::pair<std::string, torch::Tensor>> tensors);


    torch::Tensor forward(const torch::Tensor& tokens, const torch::Tensor& t) override;
    /// Sequences with no requested position are not computed, the last layer runs its query side
    /// on the requested positions only, and the LM head only there (as TransformerNet::forwardAt).
    torch::Tensor forwardAt(const torch::Tensor& tokens, const torch::Tensor& t, const torch::Tensor& positions) override;
    bool timeConditioned() const override { return false; } // ESM reads no time
    std::string kind() const override { return "esm"; }

    /// The model's logits over its whole vocabulary for its own ids [B, L] (frame included) ->
    /// [B, L, V]: what transformers' EsmForMaskedLM returns, for tests and exports.
    torch::Tensor modelLogits(const torch::Tensor& ids);
    const EsmArchitecture& architecture() const { return m_architecture; }

private:
    struct Linear {
        torch::Tensor weight, bias;
    };
    struct Norm {
        torch::Tensor weight, bias;
    };
    struct Layer {
        Norm attentionNorm;
        Linear query, key, value, output;
        Norm feedForwardNorm;
        Linear intermediate, down;
    };

    EsmDenoiser(EsmArchitecture architecture, const ModelVocabulary& vocabulary, int64_t length, std::string prefix);
    std::shared_ptr<PublishedDenoiser> emptyCopy() const override;
    void bind() override;
    torch::Tensor embed(const torch::Tensor& ids) const;               ///< [B, L] -> [B, L, E]
    torch::Tensor layer(const Layer& l, const torch::Tensor& x) const;  ///< [B, L, E] -> [B, L, E]
    /// The last layer's output at `rows` (flat indices into [B * L]) only -> [P, E].
    torch::Tensor layerAt(const Layer& l, const torch::Tensor& x, const torch::Tensor& rows) const;
    torch::Tensor feedForward(const Layer& l, const torch::Tensor& h) const;
    torch::Tensor head(const torch::Tensor& h, bool realOnly) const;     ///< [..., E] -> [..., S or V]
    torch::Tensor norm(const Norm& n, const torch::Tensor& x) const;

    EsmArchitecture m_architecture;
    torch::Tensor m_words; ///< [V, E] word embeddings
    Norm m_embeddingNorm, m_finalNorm, m_headNorm;
    Linear m_headDense;
    torch::Tensor m_decoder, m_headBias; ///< [V, E] (the word embeddings when tied), [V]
    std::vector<Layer> m_layers;
};

} // namespace d2dpo
