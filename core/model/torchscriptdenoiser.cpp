// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/torchscriptdenoiser.h"

#include <cstdio>
#include <optional>
#include <sstream>

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/script.h>
#include <torch/torch.h>

#include "base/failurereport.h"
#include "base/untrustedtext.h"
#include "model/device.h"
#include "model/loradenoiser.h"
#include "model/memoryarchive.h"
#include "model/modelwarnings.h"
#include "model/scriptattention.h"
#include "model/archivegate.h"
#include "model/loadedobjects.h"
#include "model/scriptoperations.h"
#include "model/scriptweights.h"

namespace d2dpo {

struct TorchScriptDenoiser::Module {
    torch::jit::Module module;
    FusedForward fused; ///< the forward with its attention run by d2dpo's kernel, where it has any

    explicit Module(torch::jit::Module m)
        : module(std::move(m))
        , fused(fuseScriptForward(module))
    {
    }
    torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& t)
    {
        // d2dpo's attention kernel and oneDNN's sgemm are the CPU's: on a GPU the model's own
        // forward runs, so the rewritten graph's fallbacks never stand between it and its device.
        if (fused.function && ids.device().is_cpu())
            return (*fused.function)({module._ivalue(), ids, t}).toTensor();
        return module.forward({ids, t}).toTensor();
    }
};

namespace {

/// What a file offered as TorchScript is, from its records alone: torch.jit.save writes a zip
/// with constants.pkl and code/; torch.save writes a zip with data.pkl only (or, before PyTorch
/// 1.6, a bare pickle). Nothing is unpickled here, so a hostile pickle never runs.
Status checkArchiveKind(std::string_view bytes)
{
    if (bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x80)
        return makeError("a Python pickle (torch.save's legacy format), not TorchScript: pickles can run code and are "
                         "never read; save the model with torch.jit.save (python/d2dpo_wrap.py does)");
    if (bytes.size() < 4 || bytes.compare(0, 4, "PK\x03\x04") != 0)
        return makeError("not a TorchScript archive (not a zip file); save the model with torch.jit.save");
    bool hasCode = false;
    try {
        if (Status s = checkArchiveBeforeLoading(bytes); !s)
            return makeError("the archive is refused unread: " + s.error());
        caffe2::serialize::PyTorchStreamReader reader(memoryArchiveReader(bytes));
        if (!reader.hasRecord("constants.pkl")) {
            if (reader.hasRecord("data.pkl"))
                return makeError("a torch.save file (a pickled object such as a state dict), not TorchScript: its "
                                 "pickle is never read; script the model and save it with torch.jit.save "
                                 "(python/d2dpo_wrap.py does)");
            return makeError("a zip archive without TorchScript's records (constants.pkl, code/)");
        }
        for (const std::string& name : reader.getAllRecords())
            hasCode = hasCode || name.rfind("code/", 0) == 0;
    } catch (const std::exception& e) {
        return makeError("not a readable TorchScript archive: " + userMessage(e));
    }
    if (!hasCode)
        return makeError("a zip archive without TorchScript code (no code/ records)");
    return Ok{};
}

/// forward(self, tokens: Tensor, t: Tensor) -> Tensor, or why not.
Status checkSignature(const torch::jit::Module& module)
{
    const auto method = module.find_method("forward");
    if (!method)
        return makeError("the module has no forward method");
    const c10::FunctionSchema& schema = method->function().getSchema();
    std::ostringstream text;
    text << schema;
    const auto& args = schema.arguments();
    bool ok = args.size() == 3 && schema.returns().size() == 1;
    for (size_t i = 1; ok && i < args.size(); ++i)
        ok = args[i].type()->isSubtypeOf(*c10::TensorType::get());
    ok = ok && schema.returns()[0].type()->isSubtypeOf(*c10::TensorType::get());
    if (!ok)
        return makeError("its forward must be forward(self, tokens: Tensor, t: Tensor) -> Tensor; it is " + text.str());
    return Ok{};
}

/// Why TorchScript could not compile an archive's code, in its first sentence: the compiler
/// follows it with the offending source, which is the model's and not a message.
std::string loadError(const std::exception& e)
{
    const std::string what = userMessage(e);
    const std::string unknown = "Unknown builtin op: ";
    if (const size_t at = what.find(unknown); at != std::string::npos) {
        std::string op = what.substr(at + unknown.size());
        op = op.substr(0, std::min(op.find_first_of(".\n"), size_t(80)));
        return "its code calls " + excerpt(op) +
               ", an operation from outside PyTorch's own (a custom op), which is never loaded or run";
    }
    size_t start = what.find_first_not_of(" \n");
    if (start == std::string::npos)
        return "(no reason given)";
    return excerpt(what.substr(start, what.find('\n', start) - start), 200);
}

} // namespace

std::string scriptError(const std::exception& e)
{
    const std::string what = e.what();
    if (what.find("Traceback of TorchScript") == std::string::npos)
        return userMessage(e);
    std::string last;
    size_t start = 0;
    while (start < what.size()) {
        const size_t end = std::min(what.find('\n', start), what.size());
        const std::string line = what.substr(start, end - start);
        if (line.find("Error: ") != std::string::npos && line.find("  ") != 0)
            last = line;
        start = end + 1;
    }
    if (last.rfind("builtins.", 0) == 0)
        last = last.substr(9);
    return last.empty() ? userMessage(e) : userMessage(last);
}

TorchScriptDenoiser::TorchScriptDenoiser(std::shared_ptr<Module> module, ModelVocabulary vocabulary, int64_t length)
    : SlottedDenoiser(length, int64_t(vocabulary.realTokenIds().size()))
    , m_module(std::move(module))
    , m_vocabulary(std::move(vocabulary))
    , m_frame(m_vocabulary)
{
}

Result<std::shared_ptr<TorchScriptDenoiser>>
TorchScriptDenoiser::load(std::string_view archive, const ModelVocabulary& vocabulary, int64_t length,
                          const std::vector<std::pair<std::string, torch::Tensor>>* weights)
{
    if (Status s = checkArchiveKind(archive); !s)
        return makeError(s.error());
    useModelWarningFilter(); // its warnings are its own text, said once each
    // TorchScript's optimising executor keeps tensors it makes while specialising a graph
    // (folded constants) and reuses them in later calls: specialised while sampling under
    // inference mode, they refuse to be saved for backward when training resumes. The plain
    // executor runs the graph as scripted (the same ops; no fusion happens on a CPU anyway).
    torch::jit::setGraphExecutorOptimize(false);
    torch::jit::Module loaded;
    try {
        loaded = torch::jit::load(memoryArchiveReader(archive), torch::Device(torch::kCPU));
    } catch (const std::exception& e) {
        return makeError("the TorchScript archive cannot be loaded: " + loadError(e));
    }
    if (Status s = checkScriptOperations(loaded); !s)
        return makeError(s.error());
    if (Status s = checkLoadedObjects(loaded); !s)
        return makeError(s.error());
    if (Status s = checkSignature(loaded); !s)
        return makeError(s.error());
    if (weights) // after every check of its code: the weights are data, the code is now trusted to run
        if (Status s = putWeights(loaded, *weights); !s)
            return makeError(s.error());
    auto module = std::make_shared<Module>(std::move(loaded));
    int64_t parameters = 0;
    for (auto p : module->module.parameters()) {
        p.set_requires_grad(true);
        parameters += p.numel();
    }
    if (parameters == 0)
        return makeError("the module has no parameters to train");
    return std::shared_ptr<TorchScriptDenoiser>(new TorchScriptDenoiser(std::move(module), vocabulary, length));
}

torch::Tensor TorchScriptDenoiser::modelIds(const torch::Tensor& tokens) const { return m_frame.modelIds(tokens); }

torch::Tensor TorchScriptDenoiser::modelLogits(const torch::Tensor& ids, const torch::Tensor& t)
{
    useModelWarningFilter(); // on whichever thread runs it
    if (c10::InferenceMode::is_enabled()) {
        // The samplers run in inference mode, but TorchScript's executor keeps tensors it makes
        // while optimising a graph (folded constants) and reuses them when training: made as
        // inference tensors they would refuse to be saved for backward. No-grad mode alone
        // spares the same work here.
        c10::InferenceMode normal(false);
        torch::NoGradGuard noGrad;
        return m_module->forward(ids, t);
    }
    return m_module->forward(ids, t);
}

torch::Tensor TorchScriptDenoiser::forward(const torch::Tensor& tokens, const torch::Tensor& t)
{
    const auto logits = modelLogits(modelIds(tokens), t);
    TORCH_CHECK(logits.dim() == 3 && logits.size(0) == tokens.size(0) &&
                    logits.size(1) == tokens.size(1) + m_frame.before() + m_frame.after(),
                "the TorchScript model returned logits of shape ", logits.sizes(), " for ", tokens.size(0),
                " sequences of ", tokens.size(1) + m_frame.before() + m_frame.after(), " ids");
    auto out = m_frame.realColumns(m_frame.taskPositions(logits, tokens.size(1)));
    if (!torch::GradMode::is_enabled()) { // sampling and measuring: a NaN there would pass unseen
        const auto bad = torch::isfinite(out).logical_not().any().to(torch::kLong);
        m_nonFinite = m_nonFinite.defined() ? m_nonFinite + bad : bad;
    }
    return out;
}

int64_t TorchScriptDenoiser::takeNonFiniteForwards()
{
    if (!m_nonFinite.defined())
        return 0;
    const int64_t count = m_nonFinite.item<int64_t>();
    m_nonFinite = torch::Tensor();
    return count;
}

int64_t takeNonFiniteForwards(DenoiserModel& model)
{
    if (auto* scripted = dynamic_cast<TorchScriptDenoiser*>(&model))
        return scripted->takeNonFiniteForwards();
    if (auto* adapted = dynamic_cast<LoraDenoiser*>(&model))
        if (auto* base = dynamic_cast<TorchScriptDenoiser*>(&adapted->base()))
            return base->takeNonFiniteForwards();
    return 0;
}

std::vector<torch::Tensor> TorchScriptDenoiser::parameters() const
{
    std::vector<torch::Tensor> out;
    for (const auto& p : m_module->module.parameters())
        out.push_back(p);
    return out;
}

torch::OrderedDict<std::string, torch::Tensor> TorchScriptDenoiser::named_parameters() const
{
    torch::OrderedDict<std::string, torch::Tensor> out;
    for (const auto& item : m_module->module.named_parameters())
        out.insert(item.name, item.value);
    return out;
}

torch::OrderedDict<std::string, torch::Tensor> TorchScriptDenoiser::named_buffers() const
{
    torch::OrderedDict<std::string, torch::Tensor> out;
    for (const auto& item : m_module->module.named_buffers())
        out.insert(item.name, item.value);
    return out;
}


torch::Tensor TorchScriptDenoiser::parameterSlot(const std::string& name) const
{
    const auto [owner, slot] = slotOwner(m_module->module, name);
    return owner.attr(slot).toTensor();
}

void TorchScriptDenoiser::setParameterSlot(const std::string& name, const torch::Tensor& value)
{
    auto [owner, slot] = slotOwner(m_module->module, name);
    owner.register_parameter(slot, value, /*is_buffer=*/false);
}

void TorchScriptDenoiser::train(bool on) { m_module->module.train(on); }

void TorchScriptDenoiser::to(torch::Device device)
{
    m_module->module.to(device);
    m_frame.to(device);
}

void TorchScriptDenoiser::to(torch::ScalarType dtype) { m_module->module.to(dtype); }

std::shared_ptr<DenoiserModel> TorchScriptDenoiser::deepCopy() const
{
    std::shared_ptr<Module> copy;
    {
        // Cloned under no_grad, the copies are leaves: a clone with autograd on would hang each
        // new parameter off the old one through CloneBackward.
        torch::NoGradGuard noGrad;
        copy = std::make_shared<Module>(m_module->module.clone());
    }
    const auto from = parameters();
    size_t i = 0;
    for (auto p : copy->module.parameters())
        p.set_requires_grad(from.at(i++).requires_grad());
    auto result = std::shared_ptr<TorchScriptDenoiser>(new TorchScriptDenoiser(copy, m_vocabulary, length()));
    result->to(device());
    return result;
}

std::string TorchScriptDenoiser::archive() const
{
    // Written once, into a string sized for the weights and a margin for the code and the zip's
    // records: no stream buffer, no copy of it.
    int64_t weightBytes = 0;
    for (const auto& p : m_module->module.parameters())
        weightBytes += p.numel() * int64_t(p.element_size());
    for (const auto& b : m_module->module.buffers())
        weightBytes += b.numel() * int64_t(b.element_size());
    std::string out;
    out.reserve(size_t(weightBytes + weightBytes / 64 + (int64_t(16) << 20)));
    bool failed = false;
    if (device().is_cpu()) {
        torch::jit::ExportModule(m_module->module, appendingArchiveWriter(out, failed));
    } else {
        torch::NoGradGuard noGrad;
        auto onHost = m_module->module.clone();
        onHost.to(torch::kCPU);
        torch::jit::ExportModule(onHost, appendingArchiveWriter(out, failed));
    }
    if (failed)
        throw std::bad_alloc();
    return out;
}

std::string TorchScriptDenoiser::codeArchive() const
{
    std::string out;
    out.reserve(size_t(16) << 20);
    bool failed = false;
    torch::NoGradGuard noGrad;
    torch::jit::ExportModule(withoutWeights(m_module->module), appendingArchiveWriter(out, failed));
    if (failed)
        throw std::bad_alloc();
    return out;
}

int64_t TorchScriptDenoiser::fusedAttention() const { return m_module->fused.rewritten; }
int64_t TorchScriptDenoiser::onednnLinears() const { return m_module->fused.linears; }

std::string TorchScriptDenoiser::signature() const
{
    std::ostringstream text;
    text << m_module->module.get_method("forward").function().getSchema();
    return text.str();
}

} // namespace d2dpo
