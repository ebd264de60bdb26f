// Export a checkpoint to a folder for use elsewhere: weights.pt (a name -> tensor dict that
// Python reads with torch.load), model_card.json (config, metrics, lineage, preference counts)
// and samples.txt (generated sequences with their decoded values).
#pragma once

#include <cstdint>
#include <string>

#include "checkpoint.h"
#include "config.h"
#include "result.h"

namespace d2dpo {

struct ExportOptions {
    int64_t sampleCount = 100;
    SamplingConfig sampling;
    uint64_t seed = 0;
    std::string preferenceCountsJson = "{}"; ///< e.g. {"pairs": 20000, "source": "rule:odd"}
    bool overwrite = false;                  ///< allow writing into a non-empty folder
};

/// Writes the export folder; refuses a non-empty folder unless options.overwrite.
Status exportCheckpoint(const LoadedCheckpoint& checkpoint, const std::string& folder, const ExportOptions& options);

} // namespace d2dpo
