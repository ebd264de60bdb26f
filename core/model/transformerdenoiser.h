// SPDX-License-Identifier: GPL-3.0-or-later
// The project's own denoiser: a transformer encoder with token (S + 1 entries, the mask
// included), position and time embeddings, producing logits over the S real tokens for every
// position (never over the mask). Time conditioning can be switched off, which makes the output
// a function of x_t alone (exact sampler caching). Its attention, layer norm and GELU run on the
// project's kernels (kernels/), and forwardAt() computes only the rows the losses read.
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include "base/config.h"
#include "model/denoiser.h"

namespace d2dpo {

struct DenoiserOptions {
    DenoiserOptions(int64_t vocabSize, int64_t length) : vocab_size_(vocabSize), length_(length) {}
    TORCH_ARG(int64_t, vocab_size);          ///< S real tokens; the mask is token S
    TORCH_ARG(int64_t, length);              ///< D positions
    TORCH_ARG(int64_t, d_model) = 64;
    TORCH_ARG(int64_t, layers) = 2;
    TORCH_ARG(int64_t, heads) = 4;
    TORCH_ARG(int64_t, ff_multiplier) = 4;
    TORCH_ARG(bool, time_conditioning) = true;
};

/// The torch module (its parameter names are the checkpoint's weight names).
class TransformerNetImpl : public torch::nn::Cloneable<TransformerNetImpl> {
public:
    explicit TransformerNetImpl(DenoiserOptions options);

    void reset() override;
    /// tokens [B, D] int64 in 0..S (S = mask), t [B] float in [0, 1] -> logits [B, D, S] float.
    torch::Tensor forward(const torch::Tensor& tokens, const torch::Tensor& t);
    /// The logits at some positions only: `positions` are ascending flat indices into [B * D]
    /// (as nonzero() gives them) -> [P, S], equal to forward(tokens, t).view({-1, S})[positions].
    /// Sequences with no requested position are not computed at all, and the last block runs its
    /// query side on the requested positions alone: the losses read only masked positions, so
    /// this skips arithmetic whose result nobody reads (bench/NOTES.md, change 5).
    torch::Tensor forwardAt(const torch::Tensor& tokens, const torch::Tensor& t, const torch::Tensor& positions);

    DenoiserOptions options;

private:
    torch::Tensor timeEmbedding(const torch::Tensor& t); ///< t [B] -> [B, E]
    torch::Tensor embed(const torch::Tensor& tokens, const torch::Tensor& t); ///< -> [B, D, E]

    torch::nn::Embedding m_tokens{nullptr};
    torch::nn::Embedding m_positions{nullptr};
    torch::nn::Linear m_time1{nullptr};
    torch::nn::Linear m_time2{nullptr};
    torch::nn::ModuleList m_blocks{nullptr};
    torch::nn::LayerNorm m_norm{nullptr};
    torch::nn::Linear m_head{nullptr};
    torch::Tensor m_positionIds; ///< buffer [D] int64: 0..D-1
};
TORCH_MODULE(TransformerNet);

/// The Denoiser face of a TransformerNet.
class TransformerDenoiser final : public DenoiserModel {
public:
    explicit TransformerDenoiser(TransformerNet net);

    torch::Tensor forward(const torch::Tensor& tokens, const torch::Tensor& t) override { return m_net->forward(tokens, t); }
    torch::Tensor forwardAt(const torch::Tensor& tokens, const torch::Tensor& t, const torch::Tensor& positions) override
    {
        return m_net->forwardAt(tokens, t, positions);
    }
    bool timeConditioned() const override { return m_net->options.time_conditioning(); }
    std::string kind() const override { return "transformer"; }
    std::vector<torch::Tensor> parameters() const override { return m_net->parameters(); }
    torch::OrderedDict<std::string, torch::Tensor> named_parameters() const override { return m_net->named_parameters(); }
    torch::OrderedDict<std::string, torch::Tensor> named_buffers() const override { return m_net->named_buffers(); }
    void train(bool on) override { m_net->train(on); }
    void to(torch::Device device) override { m_net->to(device); }
    void to(torch::ScalarType dtype) override { m_net->to(dtype); }
    std::shared_ptr<DenoiserModel> deepCopy() const override;

private:
    TransformerNet m_net;
};

/// A freshly initialised transformer denoiser for `spec` on `device`.
Denoiser makeDenoiser(const ModelSpec& spec, int64_t vocabSize, torch::Device device);

} // namespace d2dpo
