// SPDX-License-Identifier: GPL-3.0-or-later
// The scorer of `d2dpo pairs --least-sure` and `d2dpo prefs score`: a model against the model it
// was fine-tuned from (--reference, else its parent in the store, else itself when pretrained).
#pragma once

#include <memory>
#include <string>

#include "base/result.h"
#include "jobs/pairscorer.h"
#include "store/preferencestore.h"

namespace d2dpo::cli {

Result<std::unique_ptr<PairScorer>> loadScorer(PreferenceStore& store, const std::string& checkpoint,
                                               const std::string& reference, const std::string& device);

} // namespace d2dpo::cli
