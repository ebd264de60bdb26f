// SPDX-License-Identifier: GPL-3.0-or-later
// A batch larger than the pairs at hand: a step draws its pairs with replacement, so 64 a step from
// 18 labels computes each about 3.6 times. Said before a run in the desktop's Train view and in
// the log of every run on labels or measurements (desktop and CLI; rule-made pairs are as many as
// asked for). Torch-free.
#pragma once

#include <cstdint>
#include <string>

namespace d2dpo {

/// "" when `batch` pairs a step fit the `pairs` at hand; else what it costs and the batch to use.
std::string batchLargerThanPairsWarning(int64_t batch, int64_t pairs);

} // namespace d2dpo
