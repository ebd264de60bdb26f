// SPDX-License-Identifier: GPL-3.0-or-later
#include "labeling/generatedpairs.h"

#include <cmath>

namespace d2dpo {

Result<std::string> recordModel(ModelCatalog& store, const ModelRecord& model)
{
    auto known = store.model(model.id);
    if (!known)
        return makeError(known.error());
    if (known->has_value())
        return known.value()->name;
    if (Status s = store.addModel(model); !s)
        return makeError(s.error());
    return model.name;
}

Result<StoredPairs> storeGeneratedPairs(PreferenceStore& store, const ModelRecord& model,
                                        const std::vector<ShownPair>& pairs, const GeneratedMargins& margins)
{
    if (!margins.margins.empty() && margins.margins.size() != pairs.size())
        return makeError("a margin for each pair is needed, or none");
    for (double margin : margins.margins)
        if (!std::isfinite(margin)) // refused before anything is stored: pairs never lose their margins
            return makeError("a pair's margin is not a finite number; nothing was stored");
    auto name = recordModel(store, model);
    if (!name)
        return makeError(name.error());
    StoredPairs stored;
    stored.modelName = name.value();
    auto ids = store.addPairs(pairs, "generated");
    if (!ids)
        return makeError(ids.error());
    stored.pairs = pairs;
    std::vector<PairMargin> recorded;
    for (size_t i = 0; i < stored.pairs.size(); ++i) {
        stored.pairs[i].id = ids.value()[i];
        if (!margins.margins.empty())
            recorded.push_back({ids.value()[i], margins.margins[i]});
    }
    if (!recorded.empty())
        if (Status s = store.setPairMargins(recorded, margins.scoredBy); !s)
            return makeError("the pairs are stored, their margins not: " + s.error());
    return stored;
}

} // namespace d2dpo
