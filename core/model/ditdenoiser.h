// SPDX-License-Identifier: GPL-3.0-or-later
// MDLM's diffusion transformer (kuleshov-group/mdlm, models/dit.py; its Hugging Face release saves
// it under "backbone.") run natively from its published weights: no code of the model's author
// runs, only this file's arithmetic on tensors read as data, on the project's kernels:
//   time: sigma = -log(1 - (1 - 1e-3) s) at MDLM's time s = 1 - t (its log-linear schedule), or
//     0 when time_conditioning is off; c = silu(W_2 silu(W_1 [cos(sigma f), sin(sigma f)]) + ...),
//     the 256 frequencies f_i = 10000^(-i/128);
//   each block: its adaLN (W c + b) gives shift, scale and gate for attention and for the MLP;
//     x += gate_a W_o attn(rotary(q), rotary(k), v) over LayerNorm(x) w_1 (1 + scale_a) + shift_a;
//     x += gate_m W_2 gelu_tanh(W_1 (LayerNorm(x) w_2 (1 + scale_m) + shift_m) + b_1) + b_2,
//     where LayerNorm has no bias and attention no projections' biases, as MDLM's;
//   the output layer: its own adaLN's shift and scale on LayerNorm(x) w, then a linear map to the
//     V ids with its bias.
// The denoiser's distribution is the softmax over the task's ids alone: MDLM's substitution
// parameterisation (the mask never predicted; unmasked positions are not read). Every position
// attends to every other. Dropout is not applied: D2-DPO compares the policy with its reference,
// and MDLM turns it off at inference.
//
// Parameters are named as the file names them ("backbone.blocks.0.attn_qkv.weight"), so a
// checkpoint, an export and low-rank adapters' patterns read as the user's own state dict. The
// rotary buffer the file carries travels as a passenger and is written back as read.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/modelvocabulary.h"
#include "base/result.h"
#include "model/ditarchitecture.h"
#include "model/publisheddenoiser.h"

namespace d2dpo {

class DitDenoiser final : public PublishedDenoiser {
public:
    /// The network `architecture` describes with the file's tensors (`prefix` before every key:
    /// "backbone." as MDLM's release saves it, or "" for a bare DIT), for a task of `length`
    /// positions framed and mapped by `vocabulary`. Every weight must be there with its shape and a
    /// float type; anything else is refused, as are non-finite weights and a length beyond the
    /// config's model_length.
    static Result<std::shared_ptr<DitDenoiser>> fromWeights(const DitArchitecture& architecture,
                                                            const ModelVocabulary& vocabulary, int64_t length,
                                                            const std::string& prefix,
                                                            std::vector<std::pair<std::string, torch::Tensor>> tensors);

    torch::Tensor forward(const torch::Tensor& tokens, const torch::Tensor& t) override;
    /// Sequences with no requested position are not computed, and the last block runs its query
    /// side, its MLP and the output layer on the requested positions only.
    torch::Tensor forwardAt(const torch::Tensor& tokens, const torch::Tensor& t, const torch::Tensor& positions) override;
    bool timeConditioned() const override { return m_architecture.timeConditioning; }
    std::string kind() const override { return "mdlm"; }

    /// The model's logits over its whole vocabulary for its own ids [B, L] at MDLM's noise level
    /// sigma [B] -> [B, L, V]: what MDLM's backbone returns, for tests.
    torch::Tensor modelLogits(const torch::Tensor& ids, const torch::Tensor& sigma);
    /// sigma for the denoiser's times t [B] (0 = all masked, 1 = data): MDLM's log-linear total
    /// noise at its time 1 - t, or zeros when the config turns time conditioning off.
    torch::Tensor sigmaAt(const torch::Tensor& t) const;
    const DitArchitecture& architecture() const { return m_architecture; }

private:
    struct Modulation {
        torch::Tensor weight, bias; ///< [k E, C], [k E]: adaLN's shifts, scales and gates
    };
    struct Block {
        torch::Tensor norm1, qkv, out, norm2, up, upBias, down, downBias;
        Modulation modulation;
    };

    DitDenoiser(DitArchitecture architecture, const ModelVocabulary& vocabulary, int64_t length, std::string prefix);
    std::shared_ptr<PublishedDenoiser> emptyCopy() const override;
    void bind() override;
    torch::Tensor condition(const torch::Tensor& sigma) const; ///< [B] -> c [B, C]
    /// LayerNorm(x) w (1 + scale) + shift; x [B, N, E] or rows [P, E] with scale, shift broadcast.
    torch::Tensor modulatedNorm(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& shift,
                                const torch::Tensor& scale) const;
    torch::Tensor block(const Block& b, const torch::Tensor& x, const torch::Tensor& c) const; ///< [B, N, E]
    /// The last block's output at `rows` (flat indices into [B * N]) only -> [P, E]; `sequence`
    /// [P] is each row's sequence.
    torch::Tensor blockAt(const Block& b, const torch::Tensor& x, const torch::Tensor& c, const torch::Tensor& rows,
                          const torch::Tensor& sequence) const;
    torch::Tensor mlp(const Block& b, const torch::Tensor& h) const;
    /// The output layer over h [..., E] with its shift and scale broadcast -> [..., S or V].
    torch::Tensor output(const torch::Tensor& h, const torch::Tensor& c, bool realOnly) const;

    DitArchitecture m_architecture;
    torch::Tensor m_embedding, m_frequencies, m_zeroBias;
    torch::Tensor m_time1, m_time1Bias, m_time2, m_time2Bias;
    torch::Tensor m_finalNorm, m_finalLinear, m_finalBias;
    Modulation m_finalModulation;
    std::vector<Block> m_blocks;
};

} // namespace d2dpo
