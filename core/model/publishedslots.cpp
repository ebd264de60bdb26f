// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/publishedslots.h"

#include <torch/torch.h>

#include "base/untrustedtext.h"
#include "model/weightmatch.h"

namespace d2dpo {

Result<PublishedTensors> takePublishedTensors(const PublishedSlots& slots,
                                              std::vector<std::pair<std::string, torch::Tensor>> tensors)
{
    PublishedTensors out;
    NamedTensors weights;
    for (auto& [name, tensor] : tensors) {
        if (slots.isPassenger && slots.isPassenger(name))
            out.passengers.insert(name, tensor);
        else if (!(slots.isDropped && slots.isDropped(name)))
            weights.emplace_back(name, std::move(tensor));
    }
    tensors.clear();
    NamedTensors declared;
    for (const auto& [name, shape] : slots.shapes)
        declared.emplace_back(name, torch::empty(shape, torch::dtype(torch::kFloat32).device(torch::kMeta)));
    for (auto& [name, tensor] : weights)
        if (tensor.is_floating_point() && tensor.scalar_type() != torch::kFloat32)
            tensor = tensor.to(torch::kFloat32); // F16, BF16: float32 master weights
    Status matched = matchWeights(declared, weights, /*sameShape=*/true, [&](const std::string& name, const torch::Tensor& w) {
        out.parameters.insert(name, w.contiguous().detach().requires_grad_(true));
    });
    if (!matched)
        return makeError(matched.error() + (weights.empty() || weights.front().first.rfind(slots.prefix, 0) == 0
                                                ? std::string()
                                                : " (are its keys under another prefix than '" + slots.prefix + "'?)"));
    for (const auto& item : out.parameters)
        if (!torch::isfinite(item.value()).all().item<bool>())
            return makeError("its weight '" + excerpt(item.key(), 80) + "' holds NaN or infinite values");
    return out;
}

} // namespace d2dpo
