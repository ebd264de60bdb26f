// SPDX-License-Identifier: GPL-3.0-or-later
// Wall-clock timestamps for records and files (no torch, no Qt).
#pragma once

#include <string>

namespace d2dpo {

/// Now as ISO 8601 UTC with milliseconds, e.g. 2026-11-21T13:40:12.345Z.
std::string utcNow();

} // namespace d2dpo
