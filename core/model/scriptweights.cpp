// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/scriptweights.h"

#include <map>

#include <torch/torch.h>

#include "base/untrustedtext.h"

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
    std::map<std::string, const torch::Tensor*> stored;
    for (const auto& [name, tensor] : weights)
        stored.emplace(name, &tensor);
    size_t used = 0;
    const auto put = [&](const std::string& name, const torch::Tensor& inSlot, bool buffer) -> Status {
        const auto found = stored.find(name);
        if (found == stored.end())
            return makeError("its weight '" + excerpt(name, 80) + "' is missing");
        if (found->second->scalar_type() != inSlot.scalar_type())
            return makeError("its weight '" + excerpt(name, 80) + "' has the wrong type");
        auto [owner, slot] = slotOwner(module, name);
        if (buffer)
            owner.register_buffer(slot, found->second->clone());
        else
            owner.register_parameter(slot, found->second->clone(), /*is_buffer=*/false);
        ++used;
        return Ok{};
    };
    // Names first: a slot is replaced while the module is walked otherwise.
    std::vector<std::pair<std::string, torch::Tensor>> parameters, buffers;
    for (const auto& item : module.named_parameters())
        parameters.emplace_back(item.name, item.value);
    for (const auto& item : module.named_buffers())
        buffers.emplace_back(item.name, item.value);
    for (const auto& [name, inSlot] : parameters)
        if (Status s = put(name, inSlot, false); !s)
            return s;
    for (const auto& [name, inSlot] : buffers)
        if (Status s = put(name, inSlot, true); !s)
            return s;
    if (used != stored.size())
        for (const auto& [name, tensor] : stored) {
            const bool slot = std::any_of(parameters.begin(), parameters.end(), [&](const auto& p) { return p.first == name; }) ||
                              std::any_of(buffers.begin(), buffers.end(), [&](const auto& b) { return b.first == name; });
            if (!slot)
                return makeError("it holds a tensor '" + excerpt(name, 80) + "' that its model does not have");
        }
    return Ok{};
}

} // namespace d2dpo
