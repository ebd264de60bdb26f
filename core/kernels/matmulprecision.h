// SPDX-License-Identifier: GPL-3.0-or-later
// Which number format the matrix products of the calling thread take (base/precision.h): set for a
// scope, as torch.autocast sets it for a region of PyTorch code, and read by the linear layers
// (kernels/onednnlinear.h). Per thread, so a bf16 training step in a job's thread leaves a sampler
// in another thread at float32. A product's gradients take the format its forward took.
#pragma once

#include <string>

#include "base/precision.h"

namespace c10 {
struct Device;
}

namespace d2dpo {

/// The calling thread's format: Float32 unless a MatmulPrecisionScope says otherwise.
Precision matmulPrecision();

/// Sets the calling thread's format until it ends, then restores the one before.
class MatmulPrecisionScope {
public:
    explicit MatmulPrecisionScope(Precision precision);
    ~MatmulPrecisionScope();
    MatmulPrecisionScope(const MatmulPrecisionScope&) = delete;
    MatmulPrecisionScope& operator=(const MatmulPrecisionScope&) = delete;

private:
    Precision m_before;
};

/// Empty when `precision` is worth taking on `device`: always for float32; for bf16, a CPU with
/// bf16 units (AVX512_BF16), or a GPU on which LibTorch runs bf16 products. Otherwise the sentence
/// that says why not (bf16 emulated in a CPU's float32 units would be slower, not faster).
std::string precisionUnsupportedReason(Precision precision, const c10::Device& device);

} // namespace d2dpo
