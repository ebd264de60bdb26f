// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/precision.h"

#include <array>
#include <utility>

namespace d2dpo {

namespace {

constexpr std::array<std::pair<Precision, std::string_view>, 2> kNames{{
    {Precision::Float32, "float32"},
    {Precision::BFloat16, "bf16"},
}};

} // namespace

std::string_view precisionName(Precision precision)
{
    for (const auto& [value, name] : kNames)
        if (value == precision)
            return name;
    return "float32";
}

std::optional<Precision> precisionFromName(std::string_view name)
{
    for (const auto& [value, known] : kNames)
        if (known == name)
            return value;
    return std::nullopt;
}

std::vector<std::string> precisionNames()
{
    std::vector<std::string> names;
    for (const auto& entry : kNames)
        names.emplace_back(entry.second);
    return names;
}

} // namespace d2dpo
