// SPDX-License-Identifier: GPL-3.0-or-later
// An imported model's measurement (samples drawn with its forward) on a thread of its own. A
// model is code someone else wrote: its forward may never return, so a stop could never be heard
// between the sampler's batches. Here the caller waits for the stop as well: once it comes, the
// measurement has a grace of a second and a half to end at its next batch; a forward that is still
// running then is abandoned (base/abandonablecall.h) with everything it uses, and the model is not
// written, since that thread may still be inside it.
#pragma once

#include <memory>
#include <string>

#include <torch/types.h>

#include "base/config.h"
#include "base/samplebudget.h"
#include "base/samplemetrics.h"
#include "base/trainlistener.h"
#include "jobs/importjob.h"
#include "jobs/pretrainjob.h"
#include "model/denoiser.h"
#include "tasks/task.h"

namespace d2dpo {

enum class MeasurementEnd {
    Measured,  ///< the metrics are whole
    Stopped,   ///< the stop was heard between batches: the model may be written unmeasured
    Abandoned, ///< its forward did not return after the stop: nothing may touch the model again
};

struct ImportMeasurement {
    MeasurementEnd end = MeasurementEnd::Measured;
    SampleMetrics metrics;
};

/// Measures `model` for `task` with `sampling` on `budget` samples; its errors are rethrown here.
/// `listener` and `progress` are told nothing once the call is abandoned.
ImportMeasurement measureImportedModel(const Denoiser& model, std::shared_ptr<const Task> task, const NoiseConfig& noise,
                                       const SamplingConfig& sampling, const SampleBudget& budget, uint64_t seed,
                                       torch::Device device, TrainListener& listener, const StopToken& stop,
                                       const EvaluationProgress& progress);

} // namespace d2dpo
