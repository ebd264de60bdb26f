// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/weightmatch.h"

#include <map>
#include <set>

#include "base/untrustedtext.h"

namespace d2dpo {

namespace {

std::string shapeText(const at::Tensor& t)
{
    std::string text = "[";
    for (int64_t i = 0; i < t.dim(); ++i)
        text += (i ? ", " : "") + std::to_string(t.size(i));
    return text + "]";
}

} // namespace

Status matchWeights(const NamedTensors& slots, const NamedTensors& stored, bool sameShape,
                    const std::function<void(const std::string& name, const at::Tensor& stored)>& put)
{
    std::map<std::string, const at::Tensor*> byName;
    for (const auto& [name, tensor] : stored)
        byName.emplace(name, &tensor);
    std::vector<std::pair<std::string, const at::Tensor*>> matched;
    std::set<std::string> slotNames;
    for (const auto& [name, slot] : slots) {
        slotNames.insert(name);
        const auto found = byName.find(name);
        if (found == byName.end())
            return makeError("its weight '" + excerpt(name, 80) + "' is missing");
        const at::Tensor& from = *found->second;
        if (from.scalar_type() != slot.scalar_type())
            return makeError("its weight '" + excerpt(name, 80) + "' has the wrong type");
        if (sameShape && from.sizes() != slot.sizes())
            return makeError("its weight '" + excerpt(name, 80) + "' has the wrong shape " + shapeText(from) +
                             " (the model's is " + shapeText(slot) + ")");
        matched.emplace_back(name, &from);
    }
    for (const auto& [name, tensor] : stored)
        if (!slotNames.count(name))
            return makeError("it holds a tensor '" + excerpt(name, 80) + "' that its model does not have");
    for (const auto& [name, from] : matched)
        put(name, *from);
    return Ok{};
}

} // namespace d2dpo
