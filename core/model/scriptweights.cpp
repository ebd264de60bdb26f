// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/scriptweights.h"

#include <map>
#include <set>

#include <torch/torch.h>

#include "base/untrustedtext.h"
#include "model/weightmatch.h"

namespace d2dpo {

std::pair<torch::jit::Module, std::string> slotOwner(const torch::jit::Module& root, const std::string& name)
{
    torch::jit::Module owner = root; // a handle: the same object
    size_t start = 0;
    for (size_t dot; (dot = name.find('.', start)) != std::string::npos; start = dot + 1)
        owner = owner.attr(name.substr(start, dot - start)).toModule();
    return {owner, name.substr(start)};
}

torch::jit::Module withoutWeights(const torch::jit::Module& module)
{
    torch::jit::Module copy = module.clone(/*inplace=*/true); // new objects, the same tensors
    const auto empty = [](const torch::Tensor& t) { return torch::empty({0}, t.options().device(torch::kCPU)); };
    for (const auto& item : copy.named_parameters()) {
        auto [owner, slot] = slotOwner(copy, item.name);
        owner.register_parameter(slot, empty(item.value), /*is_buffer=*/false);
    }
    for (const auto& item : copy.named_buffers()) {
        auto [owner, slot] = slotOwner(copy, item.name);
        owner.register_buffer(slot, empty(item.value));
    }
    return copy;
}

Status putWeights(torch::jit::Module& module, const std::vector<std::pair<std::string, torch::Tensor>>& weights)
{
    // Names first: a slot is replaced while the module is walked otherwise. The slots are empty
    // placeholders (withoutWeights), so only their types are compared.
    NamedTensors slots;
    std::set<std::string> buffers;
    for (const auto& item : module.named_parameters())
        slots.emplace_back(item.name, item.value);
    for (const auto& item : module.named_buffers()) {
        slots.emplace_back(item.name, item.value);
        buffers.insert(item.name);
    }
    return matchWeights(slots, weights, /*sameShape=*/false, [&](const std::string& name, const torch::Tensor& from) {
        auto [owner, slot] = slotOwner(module, name);
        if (buffers.count(name))
            owner.register_buffer(slot, from.clone());
        else
            owner.register_parameter(slot, from.clone(), /*is_buffer=*/false);
    });
}

} // namespace d2dpo
