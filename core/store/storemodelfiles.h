// SPDX-License-Identifier: GPL-3.0-or-later
// A team store's checkpoint files (storemodelfiles.cpp). Not for use outside store/.
#pragma once

#include <string>

#include "store/sql/sqldatabase.h"

namespace d2dpo {

/// Keeps the checkpoint at `path` in the store with its model (a team store: every maintainer's
/// machine reads it from there); nothing when there is no file at `path`.
void storeModelFile(sql::Database& db, const std::string& modelId, const std::string& path);

/// The model's checkpoint as a file on this machine: `path` when it is here; else the store's copy,
/// fetched into the cache ($XDG_CACHE_HOME/d2dpo-studio/team-models) the first time; else `path`.
std::string localModelPath(sql::Database& db, const std::string& modelId, const std::string& path);

} // namespace d2dpo
