// SPDX-License-Identifier: GPL-3.0-or-later
// The ranges every setting must lie in: one source for validate() in config.cpp (the CLI, the
// jobs, checkpoints read back) and for the Train view's settings form, so both accept the same
// values and say the same bounds.
#pragma once

#include <cstdint>

namespace d2dpo::limits {

inline constexpr int kMinLength = 2, kMaxLength = 512;          ///< sequence length N
inline constexpr int kMinDModel = 4, kMaxDModel = 4096;
inline constexpr int kMaxLayers = 64;
inline constexpr int kMaxFfMultiplier = 16;
inline constexpr double kMaxEta = 100;                           ///< remasking coefficient, >= 0
inline constexpr double kMaxBeta = 1e4;                          ///< D2-DPO beta, > 0
inline constexpr double kMaxLearningRate = 1;                    ///< > 0
inline constexpr int64_t kMaxBatch = 1'000'000;                  ///< pairs (D2-DPO) or sequences (pretraining)
inline constexpr int64_t kMaxSteps = 10'000'000;                 ///< D2-DPO steps
inline constexpr int kMaxTSamplesPerPair = 1024;
inline constexpr int kMaxLoraRank = 4096;                         ///< low-rank adapters (0 = off)
inline constexpr int64_t kMaxEvalEvery = 10'000'000;             ///< 0 = only at the end
inline constexpr int64_t kMaxEvalSamples = 1'000'000;
inline constexpr int kMaxSamplingSteps = 100'000;

} // namespace d2dpo::limits
