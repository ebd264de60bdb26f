// SPDX-License-Identifier: GPL-3.0-or-later
// The bridge between a checkpoint file and the store: the record the store keeps of a model.
#pragma once

#include <string>

#include "store/preferencestore.h"

namespace d2dpo {

struct CheckpointInfo;

/// The checkpoint as the store records it (configs, metrics, lineage, its creation time).
ModelRecord modelRecordFor(const CheckpointInfo& info, const std::string& path, const std::string& name);

} // namespace d2dpo
