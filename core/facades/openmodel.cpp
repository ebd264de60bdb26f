// SPDX-License-Identifier: GPL-3.0-or-later
#include "facades/openmodel.h"

#include "model/device.h"

namespace d2dpo {

Result<OpenedModel> openModel(const std::string& path, torch::Device device, const std::string& rule)
{
    auto loaded = loadCheckpoint(path, device);
    if (!loaded)
        return makeError(loaded.error());
    auto task = makeTask(withRule(loaded->info.spec.task, rule));
    if (!task)
        return makeError(task.error());
    loaded->info.spec.task = task.value()->config();
    auto noise = makeNoiseProcess(loaded->info.spec.noise, task.value()->vocabSize());
    if (!noise)
        return makeError(noise.error());
    return OpenedModel{device, std::move(loaded.value()), std::move(task.value()), std::move(noise.value())};
}

Result<OpenedModel> openModel(const std::string& path, const std::string& device, const std::string& rule)
{
    auto resolved = resolveDevice(device);
    if (!resolved)
        return makeError(resolved.error());
    return openModel(path, resolved.value(), rule);
}

Status requireTask(const Task& task, const std::string& expectedKey, const std::string& what)
{
    if (task.key() == expectedKey)
        return Ok{};
    return makeError(what + " is a model of the task " + task.key() + ", not of " + expectedKey +
                     ": its sequences cannot be read as that task's");
}

} // namespace d2dpo
