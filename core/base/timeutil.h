// SPDX-License-Identifier: GPL-3.0-or-later
// Wall-clock timestamps for records and files (no torch, no Qt).
#pragma once

#include <string>

namespace d2dpo {

/// Now as ISO 8601 UTC with milliseconds, e.g. 2026-11-21T13:40:12.345Z.
std::string utcNow();

/// A duration as a clock reads it: "4:07", "1:02:09"; "–" when unknown (negative or not finite).
std::string clockDuration(double seconds);

} // namespace d2dpo
