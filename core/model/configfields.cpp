// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/configfields.h"

#include "base/untrustedtext.h"

namespace d2dpo {

Result<nlohmann::json> parseModelConfig(const std::string& configJson)
{
    if (Status s = checkJsonDepth(configJson, 16); !s)
        return makeError("its config.json is " + s.error());
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(configJson);
    } catch (const nlohmann::json::exception& e) {
        return makeError(std::string("its config.json is not JSON: ") + e.what());
    }
    if (!j.is_object())
        return makeError("its config.json is not a JSON object");
    return j;
}

Result<int64_t> configCount(const nlohmann::json& j, const char* key, int64_t low, int64_t high)
{
    if (!j.contains(key))
        return makeError(std::string("its config.json has no \"") + key + "\"");
    const auto& v = j.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < low || v.get<int64_t>() > high)
        return makeError(std::string("its config.json's \"") + key + "\" must be a whole number in " +
                         std::to_string(low) + ".." + std::to_string(high) + " (got " + excerpt(v.dump(), 40) + ")");
    return v.get<int64_t>();
}

Result<bool> configFlag(const nlohmann::json& j, const char* key, bool fallback)
{
    if (!j.contains(key) || j.at(key).is_null())
        return fallback;
    if (!j.at(key).is_boolean())
        return makeError(std::string("its config.json's \"") + key + "\" must be true or false");
    return j.at(key).get<bool>();
}

} // namespace d2dpo
