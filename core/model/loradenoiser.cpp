// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/loradenoiser.h"

#include <cmath>
#include <limits>
#include <map>
#include <regex>

#include <torch/torch.h>

#include "model/device.h"
#include "model/slotteddenoiser.h"

namespace d2dpo {

LoraDenoiser::LoraDenoiser(std::shared_ptr<SlottedDenoiser> base, std::vector<Adapter> adapters, int rank)
    : DenoiserModel(base->length(), base->vocabSize())
    , m_base(std::move(base))
    , m_adapters(std::move(adapters))
    , m_rank(rank)
{
}

Result<std::shared_ptr<LoraDenoiser>> LoraDenoiser::adapt(std::shared_ptr<SlottedDenoiser> base,
                                                          const LoraOptions& options)
{
    if (options.rank < 1)
        return makeError("the adapters' rank must be at least 1");
    std::regex targets;
    try {
        targets = std::regex(options.targets, std::regex::ECMAScript);
    } catch (const std::regex_error&) {
        return makeError("the adapters' targets '" + options.targets + "' are not a valid regular expression");
    }
    torch::NoGradGuard noGrad;
    auto generator = makeGenerator(options.seed, base->device());
    std::vector<Adapter> adapters;
    std::string matrices;
    for (const auto& item : base->named_parameters()) {
        torch::Tensor weight = item.value();
        weight.set_requires_grad(false); // the model's own weights are frozen: only A and B learn
        if (weight.dim() != 2)
            continue;
        matrices += (matrices.empty() ? "" : ", ") + item.key();
        if (!std::regex_search(item.key(), targets))
            continue;
        const int64_t out = weight.size(0), in = weight.size(1);
        // As PEFT starts them: A uniform in +-1/sqrt(in) (Kaiming's bound for a = sqrt(5)), B zero.
        const double bound = 1.0 / std::sqrt(double(in));
        auto a = (torch::rand({options.rank, in}, generator, weight.options()) * 2 - 1) * bound;
        auto b = torch::zeros({out, int64_t(options.rank)}, weight.options());
        adapters.push_back({item.key(), weight, a.requires_grad_(true), b.requires_grad_(true)});
    }
    if (adapters.empty())
        return makeError("no weight matrix of the model matches the adapters' targets '" + options.targets +
                         "' (its matrices: " + (matrices.empty() ? std::string("none") : matrices.substr(0, 300)) + ")");
    return std::shared_ptr<LoraDenoiser>(new LoraDenoiser(std::move(base), std::move(adapters), options.rank));
}

void LoraDenoiser::applyAdapters()
{
    for (const Adapter& adapter : m_adapters)
        m_base->setParameterSlot(adapter.name, adapter.w0 + torch::matmul(adapter.b, adapter.a));
}

std::string LoraDenoiser::kind() const { return m_base->kind(); }

template <typename Call>
torch::Tensor LoraDenoiser::adapted(const Call& call)
{
    // The module is shared with the reference: its mode and its slots are this model's for the
    // length of the call. The slots get W0 back after it (the graph keeps what it used), so an
    // adapted copy of the weights lives only as long as a forward's graph.
    m_base->train(m_training);
    applyAdapters();
    struct RestoreWeights {
        LoraDenoiser& model;
        ~RestoreWeights()
        {
            for (const Adapter& adapter : model.m_adapters)
                model.m_base->setParameterSlot(adapter.name, adapter.w0);
        }
    } restore{*this};
    return call();
}

torch::Tensor LoraDenoiser::forward(const torch::Tensor& tokens, const torch::Tensor& t)
{
    return adapted([&] { return m_base->forward(tokens, t); });
}

torch::Tensor LoraDenoiser::forwardAt(const torch::Tensor& tokens, const torch::Tensor& t, const torch::Tensor& positions)
{
    return adapted([&] { return m_base->forwardAt(tokens, t, positions); });
}

bool LoraDenoiser::timeConditioned() const { return m_base->timeConditioned(); }

std::vector<torch::Tensor> LoraDenoiser::parameters() const
{
    std::vector<torch::Tensor> out;
    for (const Adapter& adapter : m_adapters) {
        out.push_back(adapter.a);
        out.push_back(adapter.b);
    }
    return out;
}

torch::OrderedDict<std::string, torch::Tensor> LoraDenoiser::named_parameters() const
{
    torch::OrderedDict<std::string, torch::Tensor> out;
    for (const Adapter& adapter : m_adapters) {
        out.insert("lora_a." + adapter.name, adapter.a);
        out.insert("lora_b." + adapter.name, adapter.b);
    }
    return out;
}

torch::OrderedDict<std::string, torch::Tensor> LoraDenoiser::named_buffers() const { return m_base->named_buffers(); }

void LoraDenoiser::to(torch::Device device)
{
    m_base->to(device); // the slots hold W0 between calls: W0 moves with the module
    for (Adapter& adapter : m_adapters) {
        adapter.w0 = m_base->parameterSlot(adapter.name);
        adapter.a = adapter.a.detach().to(device).requires_grad_(adapter.a.requires_grad());
        adapter.b = adapter.b.detach().to(device).requires_grad_(adapter.b.requires_grad());
    }
}

void LoraDenoiser::to(torch::ScalarType dtype)
{
    m_base->to(dtype);
    for (Adapter& adapter : m_adapters) {
        adapter.w0 = m_base->parameterSlot(adapter.name);
        adapter.a = adapter.a.detach().to(dtype).requires_grad_(adapter.a.requires_grad());
        adapter.b = adapter.b.detach().to(dtype).requires_grad_(adapter.b.requires_grad());
    }
}

std::shared_ptr<DenoiserModel> LoraDenoiser::deepCopy() const
{
    std::vector<Adapter> copies = m_adapters;
    for (Adapter& adapter : copies) {
        adapter.a = adapter.a.detach().clone().requires_grad_(adapter.a.requires_grad());
        adapter.b = adapter.b.detach().clone().requires_grad_(adapter.b.requires_grad());
    }
    auto copy = std::shared_ptr<LoraDenoiser>(new LoraDenoiser(m_base, std::move(copies), m_rank));
    copy->m_training = m_training;
    return copy;
}

std::shared_ptr<SlottedDenoiser> LoraDenoiser::merged() const
{
    torch::NoGradGuard noGrad;
    auto copy = std::static_pointer_cast<SlottedDenoiser>(m_base->deepCopy());
    for (const Adapter& adapter : m_adapters)
        copy->setParameterSlot(adapter.name, (adapter.w0 + torch::matmul(adapter.b, adapter.a)).detach().clone());
    for (auto& p : copy->parameters())
        p.set_requires_grad(true); // a model like any other from here on
    copy->train(m_training);
    return copy;
}

Status LoraDenoiser::resumeFrom(const DenoiserModel& merged)
{
    torch::NoGradGuard noGrad;
    std::map<std::string, torch::Tensor> weights;
    for (const auto& item : merged.named_parameters())
        weights[item.key()] = item.value().to(m_adapters.front().w0.device(), m_adapters.front().w0.scalar_type());
    std::map<std::string, const Adapter*> adapted;
    for (const Adapter& adapter : m_adapters)
        adapted[adapter.name] = &adapter;
    for (const auto& item : m_base->named_parameters()) {
        const auto found = weights.find(item.key());
        if (found == weights.end() || !found->second.sizes().equals(item.value().sizes()))
            return makeError("its weight '" + item.key() + "' is missing or of another shape: not a run of this model");
        if (!adapted.count(item.key()) && !torch::equal(found->second, item.value()))
            return makeError("its weight '" + item.key() +
                             "', which the adapters leave alone, differs from the model's: not a run with these "
                             "adapters (was it a run of every weight?)");
    }
    std::vector<std::pair<torch::Tensor, torch::Tensor>> factors; // (A, B) of each adapter, in order
    for (const Adapter& adapter : m_adapters) {
        const torch::Tensor weight = weights.at(adapter.name);
        const torch::Tensor delta = (weight - adapter.w0).to(torch::kDouble);
        auto [u, s, vh] = torch::linalg_svd(delta, /*full_matrices=*/false);
        const int64_t r = std::min<int64_t>(m_rank, s.size(0));
        const torch::Tensor root = s.narrow(0, 0, r).sqrt();
        torch::Tensor b = u.narrow(1, 0, r) * root.unsqueeze(0);
        torch::Tensor a = root.unsqueeze(1) * vh.narrow(0, 0, r);
        // A checkpoint stores W0 + B A rounded to float: the rest of W - W0 is that rounding, of
        // the order of float's epsilon times |W|. More than a few times that is a change of higher rank.
        const double rest = (delta - torch::matmul(b, a)).norm().item<double>();
        const double allowed = 8 * std::numeric_limits<float>::epsilon() * weight.to(torch::kDouble).norm().item<double>();
        if (rest > allowed)
            return makeError("its change of '" + adapter.name + "' needs a rank above the adapters' " +
                             std::to_string(m_rank) + ": not a run with these adapters");
        if (r < m_rank) { // a matrix smaller than the rank: pad with zero rows and columns
            a = torch::cat({a, torch::zeros({m_rank - r, a.size(1)}, a.options())});
            b = torch::cat({b, torch::zeros({b.size(0), m_rank - r}, b.options())}, 1);
        }
        factors.emplace_back(a.to(adapter.a.scalar_type()), b.to(adapter.b.scalar_type()));
    }
    for (size_t k = 0; k < m_adapters.size(); ++k) {
        m_adapters[k].a.copy_(factors[k].first);
        m_adapters[k].b.copy_(factors[k].second);
    }
    return Ok{};
}

std::vector<std::string> LoraDenoiser::targets() const
{
    std::vector<std::string> names;
    for (const Adapter& adapter : m_adapters)
        names.push_back(adapter.name);
    return names;
}

int64_t LoraDenoiser::trainedCount() const
{
    int64_t count = 0;
    for (const Adapter& adapter : m_adapters)
        count += adapter.a.numel() + adapter.b.numel();
    return count;
}

} // namespace d2dpo
