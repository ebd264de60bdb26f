// SPDX-License-Identifier: GPL-3.0-or-later
// The Models view's details of one model, as rich text: name and id, what it was trained from,
// the run that made it (where a stopped run stopped), its last evaluation, its task and its file.
#pragma once

#include <QString>

#include <optional>

#include "store/preferencestore.h"

namespace d2dpo::ui {

QString modelDetails(PreferenceStore& store, const ModelRecord& model, const std::optional<ModelRecord>& reference);

} // namespace d2dpo::ui
