// SPDX-License-Identifier: GPL-3.0-or-later
// A rough, deliberately generous estimate of the memory one D2-DPO step needs, so that absurd
// settings (a batch no machine holds) are refused in the form with a clear message instead of
// ending in an out-of-memory kill minutes later. No torch here.
#pragma once

#include <cstdint>

#include "base/config.h"
#include "base/result.h"

namespace d2dpo {

/// Bytes of activations, weights and optimiser state held at the peak of one training step or
/// one evaluation batch, whichever is larger (float32).
int64_t estimateDpoPeakBytes(const ModelSpec& spec, const DpoConfig& dpo, const SamplingConfig& sampling);

/// The denoiser's parameter count as its spec describes it (the transformer's within a few percent, the
/// recorded count for a TorchScript model), for people choosing a size.
int64_t estimateParameterCount(const ModelSpec& spec);

/// MemAvailable from /proc/meminfo, and no more than the address space RLIMIT_AS (`ulimit -v`)
/// leaves the process; -1 when unknown.
int64_t availableHostMemoryBytes();

/// Ok, or why the settings would not fit in `availableBytes` (unknown (-1): always Ok).
Status checkFitsInMemory(const ModelSpec& spec, const DpoConfig& dpo, const SamplingConfig& sampling,
                         int64_t availableBytes);

} // namespace d2dpo
