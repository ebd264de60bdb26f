// SPDX-License-Identifier: GPL-3.0-or-later
#include "kernels/matmulprecision.h"

#include <torch/torch.h>

namespace d2dpo {

namespace {

thread_local Precision tCurrent = Precision::Float32;

bool cpuHasBf16Units()
{
    __builtin_cpu_init();
    // GCC names AVX512_BF16 "avx512bf16"; AMX's tiles (amx-bf16) come with it on every CPU that has them.
    return __builtin_cpu_supports("avx512bf16");
}

/// Whether LibTorch runs a bf16 product on the GPU and gets it right. Its C++ API tells a GPU's
/// compute capability only through CUDA's headers, which a CPU build lacks, so this asks the GPU
/// itself; a GPU that emulates bf16 (before compute capability 8) passes too.
bool gpuHasBf16Units(const c10::Device& device)
{
    try {
        const auto a = torch::ones({16, 16}, torch::dtype(torch::kBFloat16).device(device));
        return torch::mm(a, a).to(torch::kFloat).sum().item<double>() == 16.0 * 16 * 16;
    } catch (const std::exception&) {
        return false;
    }
}

} // namespace

Precision matmulPrecision() { return tCurrent; }

MatmulPrecisionScope::MatmulPrecisionScope(Precision precision)
    : m_before(tCurrent)
{
    tCurrent = precision;
}

MatmulPrecisionScope::~MatmulPrecisionScope() { tCurrent = m_before; }

std::string precisionUnsupportedReason(Precision precision, const c10::Device& device)
{
    if (precision == Precision::Float32)
        return {};
    if (device.is_cpu())
        return cpuHasBf16Units() ? std::string()
                                 : "this processor has no bf16 units (AVX512_BF16): its bf16 products would be "
                                   "emulated and slower than float32; train at --precision float32";
    if (device.is_cuda()) {
        static const bool has = gpuHasBf16Units(device); // one probe a process
        return has ? std::string() : "this GPU does not run bf16 matrix products; train at --precision float32";
    }
    return "bf16 matrix products run on a CPU or a CUDA GPU only";
}

} // namespace d2dpo
