// SPDX-License-Identifier: GPL-3.0-or-later
// Reading a published model's config.json (transformers' PretrainedConfig as JSON): the whole
// numbers and flags an architecture is built from, each checked against a range before anything is
// sized by it, and the error naming the key. Shared by every architecture read as data
// (esmarchitecture.h, ditarchitecture.h). Torch-free.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace d2dpo {

/// config.json's text -> its object, or why not (not JSON, nested too deep, not an object).
Result<nlohmann::json> parseModelConfig(const std::string& configJson);

/// The whole number at `key` in low..high; missing or out of range is an error naming the key.
Result<int64_t> configCount(const nlohmann::json& config, const char* key, int64_t low, int64_t high);

/// The flag at `key`; `fallback` when it is missing or null, an error when it is not a boolean.
Result<bool> configFlag(const nlohmann::json& config, const char* key, bool fallback);

} // namespace d2dpo
