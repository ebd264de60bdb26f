// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/openmodel.h"

#include "model/device.h"

namespace d2dpo {

Result<OpenedModel> openModel(const std::string& path, torch::Device device)
{
    auto loaded = loadCheckpoint(path, device);
    if (!loaded)
        return makeError(loaded.error());
    auto task = makeTask(loaded->info.spec.task);
    if (!task)
        return makeError(task.error());
    auto noise = makeNoiseProcess(loaded->info.spec.noise, task.value()->vocabSize());
    if (!noise)
        return makeError(noise.error());
    return OpenedModel{device, std::move(loaded.value()), std::move(task.value()), std::move(noise.value())};
}

Result<OpenedModel> openModel(const std::string& path, const std::string& device)
{
    auto resolved = resolveDevice(device);
    if (!resolved)
        return makeError(resolved.error());
    return openModel(path, resolved.value());
}

} // namespace d2dpo
