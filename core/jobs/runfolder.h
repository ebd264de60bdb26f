// SPDX-License-Identifier: GPL-3.0-or-later
// Where a store's local files go: a D2-DPO run's checkpoints and new models, beside an SQLite store;
// for a team store (a URL), in this machine's data folder (their files reach the team through the store).
#pragma once

#include <string>
#include <system_error>

namespace d2dpo {

/// A team store's name (postgresql://... or postgres://...) rather than a file: never made absolute.
bool isTeamStoreUrl(const std::string& storePath);

/// The folder of an SQLite store's file; for a team store, $XDG_DATA_HOME/d2dpo-studio/team (or
/// ~/.local/share/...).
std::string storeFolder(const std::string& storePath);

/// <storeFolder>/runs/<local time yyyyMMdd-HHmmss>-<reference model id>, made unique.
std::string newRunFolder(const std::string& storePath, const std::string& referenceModelId);

/// The lock file a run in `outputFolder` holds while it lives (and records as its lockPath).
std::string runLockPath(const std::string& outputFolder);

/// Makes `folder` (and its parents) for a run; `made` says whether it did not exist before, so that
/// a run that fails can leave nothing behind (removeIfEmpty).
std::error_code makeRunFolder(const std::string& folder, bool& made);

/// Removes `folder` when it holds nothing (a failed run's, made by it); never a folder with files.
void removeIfEmpty(const std::string& folder);

} // namespace d2dpo
