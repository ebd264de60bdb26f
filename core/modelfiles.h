// What the desktop application does with a checkpoint file, behind a torch-free header: look
// at its samples (the Models view's histogram and sample list) and export it as a folder.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config.h"
#include "result.h"
#include "samplemetrics.h"

namespace d2dpo {

struct ExportOptions {
    int64_t sampleCount = 100;
    SamplingConfig sampling;
    uint64_t seed = 0;
    std::string preferenceCountsJson = "{}"; ///< e.g. {"pairs": 20000, "source": "rule:odd"}
    std::string runJson = "{}";              ///< the run that made the model, for the card's lineage
    bool overwrite = false;                  ///< allow writing into a non-empty folder
};

/// Loads the checkpoint at `checkpointPath` and writes its export folder (see exporter.h).
Status exportCheckpointFile(const std::string& checkpointPath, const std::string& folder,
                            const ExportOptions& options);

struct ModelSummary {
    SampleMetrics metrics;
    std::vector<std::string> samples; ///< the sequences as token text
    std::vector<int64_t> decoded;     ///< their decoded values, -1 when invalid
};

/// Draws `count` samples from the checkpoint (seeded, so two models compare on the same draws).
Result<ModelSummary> summarizeCheckpoint(const std::string& checkpointPath, int64_t count, int samplingSteps,
                                         uint64_t seed, const std::string& device = "auto");

} // namespace d2dpo
