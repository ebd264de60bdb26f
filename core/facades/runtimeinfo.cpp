// SPDX-License-Identifier: GPL-3.0-or-later
#include "facades/runtimeinfo.h"

#include <torch/version.h>

#include <torch/cuda.h>

#include "model/device.h"

namespace d2dpo {

std::string libtorchVersion() { return TORCH_VERSION; }


bool cudaAvailable() { return torch::cuda::is_available(); }

std::string describeAutoRuntime()
{
    auto device = resolveDevice("auto");
    return device ? describeRuntime(device.value()) : device.error();
}

Status setCpuThreads(int threads) { return configureThreads(threads); }

Result<std::string> setUpRuntime(int threads, const std::string& device)
{
    if (Status s = configureThreads(threads); !s)
        return makeError(s.error());
    auto resolved = resolveDevice(device);
    if (!resolved)
        return makeError(resolved.error());
    return describeRuntime(resolved.value());
}

} // namespace d2dpo
