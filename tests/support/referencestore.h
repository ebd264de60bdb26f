// SPDX-License-Identifier: GPL-3.0-or-later
// A preference store that holds one tiny reference model, as the Label view leaves a store after
// generating pairs from it: the start of the Train view's and the stop/resume suites.
#pragma once

#include <memory>
#include <string>

#include "store/preferencestore.h"
#include "support/tinycheckpoint.h"

namespace d2dpo::test {

/// A new store at `file` with `reference` recorded as the pretrained model "tiny reference"; null
/// when the store cannot be opened or the model not added.
std::unique_ptr<PreferenceStore> storeWithReference(const std::string& file, const TinyCheckpoint& reference);

} // namespace d2dpo::test
