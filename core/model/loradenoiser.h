// SPDX-License-Identifier: GPL-3.0-or-later
// Low-rank adapters (LoRA, Hu et al. 2021) for a model brought in (TorchScript, whatever its code,
// or a network read from published weights: any model with weight slots, slotteddenoiser.h): each chosen weight matrix W [out, in] of the module becomes W0 + B A, with A [r, in]
// random and B [out, r] zero (so the adapted model starts as the model), and only A and B are
// trained: Adam keeps moments for r (in + out) numbers per matrix instead of in x out, and no
// gradient of the model's own weights is ever made. The module's slots are set to W0 + B A before
// each forward (TorchScript reads a weight from its slot on every call), so autograd reaches A and
// B through the model's own code.
//
// The frozen reference of a D2-DPO run is this model's deepCopy(): it shares the module and W0
// (no second copy of the model's weights) with adapters of its own, frozen. A checkpoint holds the
// merged model (W0 + B A as the module's weights): exported, it is a plain TorchScript model again.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "model/denoiser.h"

namespace d2dpo {

class SlottedDenoiser;

struct LoraOptions {
    int rank = 8;
    /// Which weights get adapters: 2-D parameters whose name matches this (ECMAScript regex, searched).
    /// The default takes every matrix but the embeddings.
    std::string targets = "^(?!.*embed).*weight$";
    uint64_t seed = 0; ///< draws A
};

class LoraDenoiser final : public DenoiserModel {
public:
    /// Adapters on `base` (its weights are frozen from here on), or why not (no weight matches).
    static Result<std::shared_ptr<LoraDenoiser>> adapt(std::shared_ptr<SlottedDenoiser> base,
                                                       const LoraOptions& options);

    torch::Tensor forward(const torch::Tensor& tokens, const torch::Tensor& t) override;
    /// The model's own subset forward, with the adapters in place.
    torch::Tensor forwardAt(const torch::Tensor& tokens, const torch::Tensor& t, const torch::Tensor& positions) override;
    bool timeConditioned() const override;
    std::string kind() const override;
    /// The adapters: A then B of each adapted matrix.
    std::vector<torch::Tensor> parameters() const override;
    torch::OrderedDict<std::string, torch::Tensor> named_parameters() const override;
    torch::OrderedDict<std::string, torch::Tensor> named_buffers() const override;
    void train(bool on) override { m_training = on; }
    void to(torch::Device device) override;
    void to(torch::ScalarType dtype) override;
    /// Adapters of its own (equal in value), the module and W0 shared.
    std::shared_ptr<DenoiserModel> deepCopy() const override;

    /// A model of its own with W0 + B A as its weights (what checkpoints and exports hold).
    std::shared_ptr<SlottedDenoiser> merged() const;
    /// Sets the adapters so that this model computes `merged` (a checkpoint of an adapted run of
    /// this model, resumed): B A = W - W0 for each adapted matrix, from its rank-r singular value
    /// decomposition (B = U sqrt(S), A = sqrt(S) V^T). Refused with a sentence, adapters unchanged,
    /// where `merged` is not such a model: another weight differs from this model's, or W - W0
    /// needs a rank above r (a run of every weight, or of a higher rank).
    Status resumeFrom(const DenoiserModel& merged);
    /// The adapted weights' names, in order.
    std::vector<std::string> targets() const;
    int rank() const { return m_rank; }
    /// The model adapted (its weights W0; the slots hold W0 + B A only during a forward).
    SlottedDenoiser& base() const { return *m_base; }
    /// Numbers trained (A and B) and numbers of the model, for messages.
    int64_t trainedCount() const;

private:
    struct Adapter {
        std::string name;
        torch::Tensor w0; ///< [out, in], frozen
        torch::Tensor a;  ///< [r, in]
        torch::Tensor b;  ///< [out, r]
    };
    LoraDenoiser(std::shared_ptr<SlottedDenoiser> base, std::vector<Adapter> adapters, int rank);
    /// Puts W0 + B A in each adapted slot (under the caller's grad mode).
    void applyAdapters();
    /// `call` (a forward of the base) with W0 + B A in the slots, W0 back after it.
    template <typename Call>
    torch::Tensor adapted(const Call& call);

    std::shared_ptr<SlottedDenoiser> m_base;
    std::vector<Adapter> m_adapters;
    int m_rank;
    bool m_training = true;
};

} // namespace d2dpo
