// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/taskconfig.h"

#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "base/configlimits.h"

namespace d2dpo {

using nlohmann::json;

namespace {

/// FNV-1a, 64 bits: a stable fingerprint of the task's data (not a security hash).
uint64_t fnv1a(const std::string& bytes, uint64_t hash = 1469598103934665603ull)
{
    for (unsigned char c : bytes) {
        hash ^= c;
        hash *= 1099511628211ull;
    }
    return hash;
}

} // namespace

std::string taskTitle(const TaskConfig& c)
{
    if (c.name == "binary-integers")
        return "binary integers, N=" + std::to_string(c.length);
    if (!c.source.empty()) {
        const size_t slash = c.source.find_last_of('/');
        return slash == std::string::npos ? c.source : c.source.substr(slash + 1);
    }
    // The lengths the task admits: an import at 140-150 is not "length 150".
    return "sequences, length " + (c.minLength > 0 && c.minLength < c.length ? std::to_string(c.minLength) + "-" : "") +
           std::to_string(c.length);
}

std::string taskKey(const TaskConfig& c)
{
    if (c.name == "binary-integers")
        return c.name + ":" + std::to_string(c.length);
    if (c.data.empty() && !c.key.empty())
        return c.key;
    uint64_t hash = fnv1a(c.symbols + (c.padded ? "|padded|" : "|fixed|") + std::to_string(c.minLength) + "|" +
                          std::to_string(c.length) + "|" + c.validity + "|");
    for (const std::string& sequence : c.data)
        hash = fnv1a(sequence + "\n", hash);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
    return c.name + ":" + std::to_string(c.length) + ":" + hex;
}

json taskConfigToJson(const TaskConfig& c, bool withData)
{
    json j = {{"name", c.name}, {"length", c.length}};
    if (!c.rule.empty())
        j["rule"] = c.rule;
    if (c.name == "binary-integers")
        return j;
    j["symbols"] = c.symbols;
    j["padded"] = c.padded;
    j["min_length"] = c.minLength;
    j["validity"] = c.validity;
    j["source"] = c.source;
    j["key"] = taskKey(c);
    j["data_count"] = c.data.size();
    if (withData)
        j["data"] = c.data;
    return j;
}

TaskConfig taskConfigFromJson(const json& j)
{
    TaskConfig c;
    c.name = j.at("name").get<std::string>();
    c.length = j.at("length").get<int>();
    c.rule = j.value("rule", std::string());
    if (c.name == "binary-integers")
        return c;
    c.symbols = j.at("symbols").get<std::string>();
    c.padded = j.at("padded").get<bool>();
    c.minLength = j.at("min_length").get<int>();
    c.validity = j.at("validity").get<std::string>();
    c.source = j.value("source", std::string());
    if (j.contains("data"))
        c.data = j.at("data").get<std::vector<std::string>>();
    else
        c.key = j.at("key").get<std::string>();
    return c;
}

Status validate(const TaskConfig& c)
{
    using namespace limits;
    if (c.name != "binary-integers" && c.name != "sequences")
        return makeError("unknown task '" + c.name + "' (known: binary-integers, sequences)");
    const int minLength = c.name == "sequences" ? 1 : kMinLength;
    if (c.length < minLength || c.length > kMaxLength)
        return makeError("sequence length must be in " + std::to_string(minLength) + ".." +
                         std::to_string(kMaxLength) + " (got " + std::to_string(c.length) + ")");
    if (c.name == "binary-integers")
        return Ok{};
    if (c.symbols.empty())
        return makeError("the task has no symbols");
    std::set<char> seen;
    for (char s : c.symbols) {
        if (s <= ' ' || s > '~' || s == '_' || s == '.')
            return makeError(std::string("'") + s + "' cannot be a symbol ('_' marks a masked position, '.' a pad; "
                                                    "symbols are printable ASCII)");
        if (!seen.insert(s).second)
            return makeError(std::string("the symbol '") + s + "' is listed twice");
    }
    if (c.minLength < 1 || c.minLength > c.length)
        return makeError("the shortest length must be in 1.." + std::to_string(c.length));
    if (c.validity != "symbols" && c.validity != "in-data")
        return makeError("validity must be 'symbols' or 'in-data' (got '" + c.validity + "')");
    // No data and no key: a task made without training sequences (a model imported without a data
    // file). It knows its symbols and lengths, so only well-formedness can be checked.
    if (c.data.empty() && c.key.empty() && c.validity == "in-data")
        return makeError("'one of the training sequences' (validity in-data) needs the training sequences; "
                         "this task has none");
    return Ok{};
}

} // namespace d2dpo
