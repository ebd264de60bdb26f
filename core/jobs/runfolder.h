// SPDX-License-Identifier: GPL-3.0-or-later
// Where a D2-DPO run started from the desktop writes its checkpoints: a new folder beside the store.
#pragma once

#include <string>

namespace d2dpo {

/// <store's folder>/runs/<local time yyyyMMdd-HHmmss>-<reference model id>, made unique.
std::string newRunFolder(const std::string& storePath, const std::string& referenceModelId);

} // namespace d2dpo
