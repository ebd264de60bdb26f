// SPDX-License-Identifier: GPL-3.0-or-later
// Where a pair on screen comes from, in words: the model that made each sequence (name, kind, id)
// and the model it was fine-tuned from, or that the pair was imported.
#pragma once

#include <QString>

#include <functional>
#include <optional>
#include <string>

#include "store/preferencestore.h"

namespace d2dpo::ui {

/// "Pair #12 · both sequences from “d2dpo run 3 step 300” (d2dpo, 4f…), fine-tuned from “reference”".
QString pairOrigin(ModelCatalog& store, const ShownPair& pair);
/// The same from models known already (a team store's, read off the window's thread): a model
/// `lookup` does not know is named by its id.
using ModelLookup = std::function<std::optional<ModelRecord>(const std::string& id)>;
QString pairOrigin(const ModelLookup& lookup, const ShownPair& pair);

} // namespace d2dpo::ui
