// SPDX-License-Identifier: GPL-3.0-or-later
// Wall-clock timestamps for records and files (no torch, no Qt).
#pragma once

#include <cstdint>
#include <string>

namespace d2dpo {

/// Now as ISO 8601 UTC with milliseconds, e.g. 2026-11-21T13:40:12.345Z.
std::string utcNow();

/// The time left of a job with `done` of `total` units after `elapsedSeconds`, at the rate so far;
/// -1 (unknown) before any progress. `done` may be a fraction of a unit (a sample whose passes are
/// under way). The one estimate every progress display shows.
double secondsLeft(double elapsedSeconds, double done, int64_t total);

/// A duration as a clock reads it: "4:07", "1:02:09"; "–" when unknown (negative or not finite).
std::string clockDuration(double seconds);

} // namespace d2dpo
