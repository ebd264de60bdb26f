// SPDX-License-Identifier: GPL-3.0-or-later
#include "facades/modelfiles.h"

#include <algorithm>

#include <torch/torch.h>

#include "base/failurereport.h"
#include "diffusion/sampler.h"
#include "facades/openmodel.h"
#include "model/device.h"
#include "train/evaluation.h"

namespace d2dpo {

Result<ModelSummary> sampleCheckpoint(const std::string& checkpointPath, int64_t count, const SamplingConfig& sampling,
                                      uint64_t seed, const std::string& device, const std::string& rule,
                                      const std::function<void(double, int64_t)>& progress, const StopToken* stop,
                                      double withinSeconds, double passSeconds)
{
    if (count < 1)
        return makeError("the sample count must be at least 1");
    if (Status s = validate(sampling); !s)
        return makeError(s.error());
    try {
        auto opened = openModel(checkpointPath, device, rule);
        if (!opened)
            return makeError(opened.error());
        const CheckpointInfo& info = opened->checkpoint.info;
        const Task& task = *opened->task;
        torch::NoGradGuard noGrad;
        auto generator = makeGenerator(seed, opened->device);
        SamplingConfig drawing = sampling;
        const SampleBudget budget{count, withinSeconds};
        auto sampler = makeSampler(opened->checkpoint.model, info.spec.noise, task.vocabSize(), drawing);
        const double rowPass = budget.fitted() || passSeconds > 0 ? timeRowPass(*opened->checkpoint.model) : 0;
        if (budget.fitted()) {
            count = samplesWithin(rowPass * double(std::max<int64_t>(1, sampler->passesPerBatch())), withinSeconds, count);
            drawing.batch = int(std::min<int64_t>(drawing.batch, evaluationBatchFor(count)));
        }
        if (passSeconds > 0)
            drawing.batch = int(std::min<int64_t>(drawing.batch, rowsPerPassWithin(rowPass, passSeconds)));
        startCountingNonFinitePasses(*opened->checkpoint.model);
        const torch::Tensor samples =
            drawSamples(*sampler, count, drawing.batch, generator, stop, progress).to(torch::kCPU).contiguous();
        ModelSummary summary;
        summary.checkpoint = {info.id, info.kind, info.parentId, info.step};
        summary.batch = drawing.batch;
        summary.metrics = task.measure(samples);
        summary.metrics.seed = seed;
        summary.metrics.sampler = describeSampling(info.spec.noise, drawing, task.length());
        reportNonFinitePasses(*opened->checkpoint.model, summary.metrics);
        summary.samples = formatRows(task, samples);
        const std::vector<int64_t> rows = rowsToHost(samples);
        for (int64_t i = 0; i < count; ++i)
            summary.hints.push_back(task.hint({rows.begin() + i * task.length(), rows.begin() + (i + 1) * task.length()}));
        return summary;
    } catch (const EvaluationStopped&) {
        return makeError("stopped");
    } catch (const std::exception& e) {
        return makeError("sampling failed: " + userMessage(e));
    }
}

Result<ModelSummary> measureCheckpoint(const std::string& checkpointPath, const MeasurementSpec& measurement,
                                       const std::string& device)
{
    if (measurement.samples < 1)
        return makeError("the sample count must be at least 1");
    if (Status s = validate(measurement.sampling); !s)
        return makeError(s.error());
    return sampleCheckpoint(checkpointPath, measurement.samples, measurement.sampling, measurement.seed, device);
}

} // namespace d2dpo
