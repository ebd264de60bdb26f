// SPDX-License-Identifier: GPL-3.0-or-later
// The store's record of a checkpoint file, found by the file itself however it is named.
#pragma once

#include <optional>
#include <string>

#include "base/result.h"
#include "store/modelcatalog.h"

namespace d2dpo {

/// The store's model whose checkpoint file is `path` (the same file, however named), or nothing.
Result<std::optional<ModelRecord>> modelStoredAt(ModelCatalog& store, const std::string& path);

} // namespace d2dpo
