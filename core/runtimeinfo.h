// What the machine offers, for code that must not include torch headers (the GUI's forms).
#pragma once

#include <string>

namespace d2dpo {

/// torch::cuda::is_available().
bool cudaAvailable();
/// The device "auto" picks, with threads and BLAS (see describeRuntime in device.h).
std::string describeAutoRuntime();

} // namespace d2dpo
