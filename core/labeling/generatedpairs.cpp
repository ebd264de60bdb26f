// SPDX-License-Identifier: GPL-3.0-or-later
#include "labeling/generatedpairs.h"

namespace d2dpo {

Result<std::string> recordModel(PreferenceStore& store, const ModelRecord& model)
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
                                        const std::vector<ShownPair>& pairs)
{
    auto name = recordModel(store, model);
    if (!name)
        return makeError(name.error());
    StoredPairs stored;
    stored.modelName = name.value();
    auto ids = store.addPairs(pairs, "generated");
    if (!ids)
        return makeError(ids.error());
    stored.pairs = pairs;
    for (size_t i = 0; i < stored.pairs.size(); ++i)
        stored.pairs[i].id = ids.value()[i];
    return stored;
}

} // namespace d2dpo
