// SPDX-License-Identifier: GPL-3.0-or-later
// What an exported model's card says about the run that made it, read from the store: the
// preference counts and the run (status, device, times, config).
#pragma once

#include <string>

#include "base/result.h"
#include "jobs/exporter.h"
#include "store/preferencestore.h"

namespace d2dpo {

/// The defaults when the model has no run.
ExportOptions exportOptionsFor(PreferenceStore& store, const ModelRecord& model);

/// exportOptionsFor() the model of the store at `storePath` whose file is `checkpointPath`; the
/// defaults when no store exists there (none is created) or it holds no such model.
Result<ExportOptions> exportOptionsForCheckpoint(const std::string& storePath, const std::string& checkpointPath);

} // namespace d2dpo
