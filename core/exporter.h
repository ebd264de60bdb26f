// Export a checkpoint to a folder for use elsewhere: weights.pt (a name -> tensor dict that
// Python reads with torch.load), model_card.json (config, metrics, lineage, preference counts)
// and samples.txt (generated sequences with their decoded values).
#pragma once

#include <cstdint>
#include <string>

#include "checkpoint.h"
#include "config.h"
#include "modelfiles.h"
#include "result.h"

namespace d2dpo {

/// Writes the export folder; refuses a non-empty folder unless options.overwrite.
Status exportCheckpoint(const LoadedCheckpoint& checkpoint, const std::string& folder, const ExportOptions& options);

} // namespace d2dpo
