#include "modelfiles.h"

#include <torch/torch.h>

#include "checkpoint.h"
#include "device.h"
#include "eulersampler.h"
#include "evaluation.h"
#include "exporter.h"
#include "task.h"

namespace d2dpo {

Status exportCheckpointFile(const std::string& checkpointPath, const std::string& folder,
                            const ExportOptions& options)
{
    auto device = resolveDevice("auto");
    if (!device)
        return makeError(device.error());
    auto loaded = loadCheckpoint(checkpointPath, device.value());
    if (!loaded)
        return makeError(loaded.error());
    return exportCheckpoint(loaded.value(), folder, options);
}

Result<ModelSummary> summarizeCheckpoint(const std::string& checkpointPath, int64_t count, int samplingSteps,
                                         uint64_t seed, const std::string& deviceSpec)
{
    if (count < 1 || samplingSteps < 1)
        return makeError("the sample count and the sampling steps must be at least 1");
    try {
        auto device = resolveDevice(deviceSpec);
        if (!device)
            return makeError(device.error());
        auto loaded = loadCheckpoint(checkpointPath, device.value());
        if (!loaded)
            return makeError(loaded.error());
        auto task = makeTask(loaded->info.spec.task);
        if (!task)
            return makeError(task.error());
        torch::NoGradGuard noGrad;
        auto generator = makeGenerator(seed, device.value());
        EulerSampler sampler(loaded->model, task.value()->maskToken(), samplingSteps, loaded->info.spec.noise.eta);
        const torch::Tensor samples = sampler.sample(count, generator, 1000).to(torch::kCPU).contiguous();
        ModelSummary summary;
        summary.decoded = decodeToHost(*task.value(), samples);
        summary.metrics = computeSampleMetrics(summary.decoded, task.value()->maxValue());
        summary.samples.reserve(size_t(count));
        for (int64_t i = 0; i < samples.size(0); ++i) {
            const int64_t* row = samples[i].data_ptr<int64_t>();
            summary.samples.push_back(task.value()->format(std::vector<int64_t>(row, row + samples.size(1))));
        }
        return summary;
    } catch (const std::exception& e) {
        return makeError("sampling failed: " + std::string(e.what()).substr(0, 300));
    }
}

} // namespace d2dpo
