// SPDX-License-Identifier: GPL-3.0-or-later
// What the machine offers, for code that must not include torch headers (the GUI's forms).
#pragma once

#include <string>

#include "base/result.h"

namespace d2dpo {

/// LibTorch's version ("2.1.2").
std::string libtorchVersion();

/// torch::cuda::is_available().
bool cudaAvailable();
/// The device "auto" picks, with threads and BLAS (see describeRuntime in device.h).
std::string describeAutoRuntime();

/// Sets LibTorch's CPU threads of the calling thread (0: the free physical cores).
Status setCpuThreads(int threads);

/// Sets LibTorch's CPU threads (0: the free physical cores) and resolves `device` ("auto", "cpu",
/// "cuda", "cuda:N"); returns the runtime line (device, threads, BLAS) for the user.
Result<std::string> setUpRuntime(int threads, const std::string& device);

} // namespace d2dpo
