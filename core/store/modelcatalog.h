// SPDX-License-Identifier: GPL-3.0-or-later
// The store's models: each checkpoint's record with its lineage (the model it was fine-tuned
// from, the run that made it), its task's spec, and its evaluations. One facet of PreferenceStore
// (store/preferencestore.h), which opens the store; a caller that only reads or records models
// may take a ModelCatalog&.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "store/records.h"
#include "store/storefacet.h"

namespace d2dpo {

class ModelCatalog : protected StoreFacet {
public:
    /// Inserts, or updates a model with the same id; records its task (addTask) when given.
    Status addModel(const ModelRecord& model);
    Result<std::vector<ModelRecord>> models();
    Result<std::optional<ModelRecord>> model(const std::string& id);
    Status renameModel(const std::string& id, const std::string& name);
    /// How many models were fine-tuned from this one.
    Result<int64_t> modelChildren(const std::string& id);
    /// Removes a model from the store (its file stays); refused while models descend from it. Its
    /// sequences and their labels stay, no longer naming it.
    Status deleteModel(const std::string& id);
    /// A model's evaluation under `sampler` (everything about how samples are drawn and measured,
    /// as one text), `samples` and `seed`: the metrics JSON when it was measured before, else nothing.
    Result<std::optional<std::string>> evaluation(const std::string& modelId, const std::string& sampler,
                                                  int64_t samples, uint64_t seed);
    /// Records it (a known one is replaced). The model must be in the store.
    Status saveEvaluation(const std::string& modelId, const std::string& sampler, int64_t samples, uint64_t seed,
                          const std::string& metricsJson);
    /// Records a task's spec (with its data) under its key; a known key is left as it is.
    Status addTask(const std::string& key, const std::string& specJson);
    /// The spec stored under `key`, or nothing.
    Result<std::optional<std::string>> taskSpec(const std::string& key);

protected:
    using StoreFacet::StoreFacet;
};

} // namespace d2dpo
