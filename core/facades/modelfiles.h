// SPDX-License-Identifier: GPL-3.0-or-later
// What the GUI and the CLI do with a checkpoint file's samples, behind a torch-free header:
// draw them (`d2dpo sample`), measure them (`d2dpo eval`) and look at them (the Models view's
// histogram and sample list). Exporting is in jobs/exporter.h.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/measurement.h"
#include "base/result.h"
#include "base/samplemetrics.h"
#include "base/sequencehint.h"
#include "base/trainlistener.h"

namespace d2dpo {

/// Who the checkpoint is: its id, kind, step and parent.
struct CheckpointSummary {
    std::string id;
    std::string kind;     ///< "pretrained" or "d2dpo"
    std::string parentId; ///< empty for a pretrained root
    int64_t step = 0;
};

struct ModelSummary {
    CheckpointSummary checkpoint;
    SampleMetrics metrics;
    std::vector<std::string> samples; ///< the sequences as the task's text
    std::vector<SequenceHint> hints;  ///< what the task reads in each (valid, value, rule)
    int64_t batch = 0;                ///< the sampler batches they were drawn in (the seeded draws depend on it)
};

/// Draws `count` samples from the checkpoint with the Euler sampler (seeded on the device, so two
/// models compare on the same draws) and measures them with the checkpoint's task (with `rule` in
/// place of its own when given). With `withinSeconds` > 0, `count` is the most drawn: as many as
/// fit in about that time at the model's timed cost (base/samplebudget.h; summary.metrics.samples
/// says how many), in batches for that count. With `passSeconds` > 0 the batches are also no larger
/// than a pass of about that long at the timed cost (rowsPerPassWithin), so a stop waits at most
/// about that long. `progress(done, total)` hears the passes (a fraction of a sample within a
/// batch); a raised `stop` ends the draws before the next pass with the error "stopped".
Result<ModelSummary> sampleCheckpoint(const std::string& checkpointPath, int64_t count, const SamplingConfig& sampling,
                                      uint64_t seed, const std::string& device = "auto", const std::string& rule = "",
                                      const std::function<void(double, int64_t)>& progress = {},
                                      const StopToken* stop = nullptr, double withinSeconds = 0,
                                      double passSeconds = 0);

/// sampleCheckpoint() as `measurement` says: its sampler, sample count and seed (the Models view
/// measures every model by standardMeasurement()).
Result<ModelSummary> measureCheckpoint(const std::string& checkpointPath, const MeasurementSpec& measurement,
                                       const std::string& device = "auto");

} // namespace d2dpo
