// SPDX-License-Identifier: GPL-3.0-or-later
// Positions in a batch of sequences [B, D] as flat indices into [B * D]: the form in which the
// noise process names the positions it reads (NoiseProcess::positionsRead) and the denoiser
// computes them (Denoiser::forwardAt).
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

namespace d2dpo {

/// The sequence (row of [B, D]) each flat position falls in: [P] int64 -> [P] int64.
inline at::Tensor sequenceOfPosition(const at::Tensor& positions, int64_t length)
{
    return positions.div(length, "floor");
}

} // namespace d2dpo
