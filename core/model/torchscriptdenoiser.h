// SPDX-License-Identifier: GPL-3.0-or-later
// A denoiser a user brings: a TorchScript module whose
//   forward(tokens: int64 [B, L], t: float [B]) -> float [B, L, V]
// scores the model's own vocabulary of V ids, with t in the project's convention (0 = all masked,
// 1 = data). The vocabulary contract (base/modelvocabulary.h) maps the task's tokens onto the
// model's ids: each task sequence of D tokens becomes begin + D mapped ids + end (L = D + frame),
// and the task's logits are the model's logits at the D positions over the ids of the task's real
// tokens alone: the softmax over those ids is the denoiser's distribution (MDLM's substitution
// parameterisation), so a head that also scores special tokens works unchanged. The module is
// trained in place through LibTorch's autograd; its archive (code and current weights) is what a
// checkpoint embeds and what export writes as model.pt.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>
#include <string_view>

#include "base/modelvocabulary.h"
#include "base/result.h"
#include "base/trainlistener.h"
#include "model/slotteddenoiser.h"
#include "model/vocabularyframe.h"

namespace d2dpo {

class TorchScriptDenoiser final : public SlottedDenoiser {
public:
    /// Loads a TorchScript archive (the bytes of a torch.jit.save file) onto the CPU for a task of
    /// `length` positions. Refused before anything is unpickled: a file that is not a zip archive,
    /// a torch.save file (a pickled object such as a state dict) and an archive without TorchScript
    /// code. Refused after loading: a forward that does not take (tokens, t) or return one tensor,
    /// and a module without parameters to train.
    /// With `weights` (a checkpoint's tensors, read as data), the archive is its code alone
    /// (codeArchive()): after every check, each parameter and buffer is taken from `weights` by its
    /// dotted name, and every one must be there, of its type, with nothing left over.
    static Result<std::shared_ptr<TorchScriptDenoiser>>
    load(std::string_view archive, const ModelVocabulary& vocabulary, int64_t length,
         const std::vector<std::pair<std::string, torch::Tensor>>* weights = nullptr);

    torch::Tensor forward(const torch::Tensor& tokens, const torch::Tensor& t) override;
    std::string kind() const override { return "torchscript"; }
    std::vector<torch::Tensor> parameters() const override;
    torch::OrderedDict<std::string, torch::Tensor> named_parameters() const override;
    torch::OrderedDict<std::string, torch::Tensor> named_buffers() const override;
    void train(bool on) override;
    void to(torch::Device device) override;
    void to(torch::ScalarType dtype) override;
    std::shared_ptr<DenoiserModel> deepCopy() const override;

    /// The tensor in the module's parameter slot `name` (dotted, as named_parameters() names it)
    /// and a tensor put in its place: low-rank adapters (loradenoiser.h) put W0 + BA there before
    /// each forward, and a merged model keeps it as its weight.
    torch::Tensor parameterSlot(const std::string& name) const override;
    void setParameterSlot(const std::string& name, const torch::Tensor& value) override;

    /// The module's own output for model ids [B, L] (frame included) -> [B, L, V], unchecked.
    torch::Tensor modelLogits(const torch::Tensor& ids, const torch::Tensor& t);
    /// Task tokens [B, D] (mask = S) -> the model's ids [B, L], frame included.
    torch::Tensor modelIds(const torch::Tensor& tokens) const;
    /// The module as a TorchScript archive with its current weights, on the CPU.
    std::string archive() const;
    /// The module's code alone: its archive with every parameter and buffer an empty tensor of its
    /// type (a checkpoint carries the weights apart, as data).
    std::string codeArchive() const;
    /// The attention expressions of the forward that d2dpo's fused kernel runs (model/scriptattention.h).
    int64_t fusedAttention() const;
    /// The linear layers of the forward that run through oneDNN's sgemm (model/scriptlinear.h).
    int64_t onednnLinears() const;
    /// forward()'s signature as TorchScript prints it, for messages.
    std::string signature() const;
    const ModelVocabulary& vocabulary() const { return m_vocabulary; }
    /// Forwards without gradients since the last call whose logits held NaN or infinities (kept
    /// on the model's device, read here: no wait per pass), then starts counting again.
    int64_t takeNonFiniteForwards();

    struct Module; ///< the torch::jit::Module, kept out of this header (torch/script.h is heavy)

private:
    TorchScriptDenoiser(std::shared_ptr<Module> module, ModelVocabulary vocabulary, int64_t length);

    std::shared_ptr<Module> m_module;
    ModelVocabulary m_vocabulary;
    VocabularyFrame m_frame;
    torch::Tensor m_nonFinite;  ///< the count takeNonFiniteForwards() reads, undefined until a forward
};

/// takeNonFiniteForwards() of a model brought in (adapted or not); 0 for the built-in models, whose
/// weights are checked finite when loaded.
int64_t takeNonFiniteForwards(DenoiserModel& model);

/// What a TorchScript error says to a user: the error its code raised (the traceback's last line,
/// "RuntimeError: ..."), not the interpreter's traceback before it.
std::string scriptError(const std::exception& e);

} // namespace d2dpo
