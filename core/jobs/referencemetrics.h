// SPDX-License-Identifier: GPL-3.0-or-later
// A D2-DPO run's baseline: the reference's metrics under the run's measurement, read from the
// store when it was measured that way before (so every run and view shows the same figures), else
// measured now and recorded there. Torch header, for jobs/ sources only.
#pragma once

#include <torch/types.h>

#include "base/measurement.h"
#include "base/samplemetrics.h"
#include "base/trainlistener.h"
#include "io/checkpoint.h"
#include "model/denoiser.h"
#include "store/preferencestore.h"
#include "tasks/task.h"

namespace d2dpo {

/// `store` may be null (nothing read or recorded); `example` is one sequence of the task [1, D],
/// to name the metrics' descriptions. A raised `stop` ends the measurement with EvaluationStopped
/// (train/evaluation.h).
SampleMetrics referenceMetrics(PreferenceStore* store, const CheckpointInfo& reference, Denoiser frozen,
                               const Task& task, const MeasurementSpec& measurement, const torch::Tensor& example,
                               TrainListener& listener, const StopToken* stop = nullptr);

} // namespace d2dpo
