// SPDX-License-Identifier: GPL-3.0-or-later
// What a job that writes a new model file (pretraining, an import) does with the store: before
// anything is computed, it refuses an output path the store records as a model (new weights
// would change that model under its record); after the file is written, it adds the model.
#pragma once

#include <string>

#include "base/result.h"

namespace d2dpo {

struct CheckpointInfo;

/// Ok when `storePath` is empty or absent, or its store records no model at `outputPath`.
Status refuseOutputOfAStoredModel(const std::string& storePath, const std::string& outputPath);

/// Adds the checkpoint written at `outputPath` to the store (created when absent) as `name` (""
/// = the file's name); an error says that the file was written but not added.
Status addWrittenModel(const std::string& storePath, const CheckpointInfo& info, const std::string& outputPath,
                       const std::string& name);

} // namespace d2dpo
