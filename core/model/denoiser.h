// SPDX-License-Identifier: GPL-3.0-or-later
// The denoiser p_theta(x_1^d | x_t, t), as everything that samples, trains, evaluates, saves or
// exports a model sees it. Two kinds stand behind it: the project's own transformer
// (transformerdenoiser.h: its kernels, its subset forward) and a TorchScript module a user brings
// (torchscriptdenoiser.h: the model's own vocabulary mapped onto the task's tokens). Samplers,
// losses, estimators, trainers, checkpoints and the exporter hold a `Denoiser` and never ask
// which kind it is. The method names follow torch::nn::Module's, so the code reads as PyTorch does.
#pragma once

#include <memory>
#include <string>

#include <torch/ordered_dict.h>
#include <torch/types.h>

namespace d2dpo {

class DenoiserModel {
public:
    virtual ~DenoiserModel() = default;

    /// tokens [B, D] int64 in 0..S (S = the task's mask token), t [B] float in [0, 1] (0 = all
    /// masked, 1 = data) -> logits [B, D, S] over the task's real tokens, never over the mask.
    virtual torch::Tensor forward(const torch::Tensor& tokens, const torch::Tensor& t) = 0;
    /// The logits at some positions only: `positions` are ascending flat indices into [B * D] (as
    /// nonzero() gives them) -> [P, S], equal to forward(tokens, t).view({-1, S})[positions]. The
    /// losses read masked positions only; a denoiser may skip what nobody reads. This one runs
    /// forward() on the sequences that hold a requested position.
    virtual torch::Tensor forwardAt(const torch::Tensor& tokens, const torch::Tensor& t, const torch::Tensor& positions);

    /// D: the positions of a sequence the task sees (a TorchScript model's frame tokens not counted).
    int64_t length() const { return m_length; }
    /// S: the task's real tokens (the symbols and the pad); the mask is token S.
    int64_t vocabSize() const { return m_vocabSize; }
    /// Whether the logits depend on t; false lets the sampler reuse them between steps.
    virtual bool timeConditioned() const { return true; }
    /// "transformer" or "torchscript" (ModelConfig::kind).
    virtual std::string kind() const = 0;

    virtual std::vector<torch::Tensor> parameters() const = 0;
    virtual torch::OrderedDict<std::string, torch::Tensor> named_parameters() const = 0;
    virtual torch::OrderedDict<std::string, torch::Tensor> named_buffers() const = 0;
    virtual void train(bool on = true) = 0;
    void eval() { train(false); }
    virtual void to(torch::Device device) = 0;
    virtual void to(torch::ScalarType dtype) = 0;
    void zero_grad();
    /// A deep copy: its own parameters, equal in value, with the same training mode.
    virtual std::shared_ptr<DenoiserModel> deepCopy() const = 0;

    torch::Device device() const { return parameters().front().device(); }

protected:
    DenoiserModel(int64_t length, int64_t vocabSize) : m_length(length), m_vocabSize(vocabSize) {}

private:
    int64_t m_length;
    int64_t m_vocabSize;
};

using Denoiser = std::shared_ptr<DenoiserModel>;

/// A frozen deep copy (gradients off, eval mode) to serve as the D2-DPO reference model.
Denoiser frozenCopy(const Denoiser& model);

int64_t parameterCount(const Denoiser& model);

/// Drops every parameter's gradient instead of zeroing it (LibTorch 1.13's zero_grad zeroes): the
/// next backward then hands its gradient buffers over rather than adding them onto zeros.
void dropGradients(const Denoiser& model);

/// Whether every parameter is finite (no NaN or infinity).
bool allFinite(const Denoiser& model);

} // namespace d2dpo
