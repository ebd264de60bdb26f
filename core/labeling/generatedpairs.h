// SPDX-License-Identifier: GPL-3.0-or-later
// Storing a batch of generated pairs, as the Label view and `d2dpo pairs` both do it: the model
// that drew them is recorded when the store does not know it yet; a known model (a fine-tuned one,
// named and measured by its run) keeps its name, path, metrics and run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "store/preferencestore.h"

namespace d2dpo {

struct StoredPairs {
    std::vector<ShownPair> pairs; ///< as given, with their new ids
    std::string modelName;        ///< the model's name as the store knows it
};

/// Records `model` unless the store knows its id; returns its name as the store knows it.
Result<std::string> recordModel(ModelCatalog& store, const ModelRecord& model);

/// The margins a batch was chosen by ("least sure first", jobs/pairscorer.h): one per pair, from the
/// model `scoredBy`; empty for a batch in draw order.
struct GeneratedMargins {
    std::vector<double> margins;
    std::string scoredBy;
};

/// Records `model` unless the store knows its id, then the pairs (source "generated") and their
/// margins when given (the queue's least-sure order reads them).
Result<StoredPairs> storeGeneratedPairs(PreferenceStore& store, const ModelRecord& model,
                                        const std::vector<ShownPair>& pairs, const GeneratedMargins& margins = {});

} // namespace d2dpo
