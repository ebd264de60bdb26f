// SPDX-License-Identifier: GPL-3.0-or-later
// Which measured sequences are held out of training, so that a model's ranking can be checked on
// values it never saw: a random split by a seeded hash of the sequence itself, so training and
// evaluation agree on it without storing it, and a sequence measured twice falls on one side.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace d2dpo {

/// Whether `sequence` is in the held-out share (0..1) of the split made with `seed`.
bool isHeldOut(const std::string& sequence, double share, uint64_t seed);

/// Spearman's rank correlation of two equally long series (average ranks for ties); NaN when
/// either is constant or shorter than 2.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

} // namespace d2dpo
