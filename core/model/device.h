// SPDX-License-Identifier: GPL-3.0-or-later
// Where tensors live and how many CPU threads LibTorch uses: CUDA when available, else the CPU,
// overridable; seeded random generators that live on the chosen device.
#pragma once

#include <cstdint>
#include <string>

#include <torch/types.h>

#include "base/result.h"

namespace d2dpo {

/// "auto" (CUDA when torch::cuda::is_available(), else CPU), "cpu", "cuda" or "cuda:N".
Result<torch::Device> resolveDevice(const std::string& spec);

/// Sets LibTorch's intra-op thread count of the calling thread; 0 means defaultThreadCount(): the
/// physical cores other processes are not keeping busy (see base/cputhreads.h).
Status configureThreads(int threads);

/// A generator for `device` seeded with `seed`, independent of the global one (so a GUI thread
/// and a worker thread never share random state).
torch::Generator makeGenerator(uint64_t seed, torch::Device device);

/// One line for logs and benchmark output: device, threads, the BLAS library actually loaded.
std::string describeRuntime(torch::Device device);

} // namespace d2dpo
