// SPDX-License-Identifier: GPL-3.0-or-later
#include "labeling/generatedpairs.h"

namespace d2dpo {

Result<StoredPairs> storeGeneratedPairs(PreferenceStore& store, const ModelRecord& model,
                                        const std::vector<ShownPair>& pairs)
{
    auto known = store.model(model.id);
    if (!known)
        return makeError(known.error());
    StoredPairs stored;
    if (known->has_value()) {
        stored.modelName = known.value()->name;
    } else {
        if (Status s = store.addModel(model); !s)
            return makeError(s.error());
        stored.modelName = model.name;
    }
    auto ids = store.addPairs(pairs, "generated");
    if (!ids)
        return makeError(ids.error());
    stored.pairs = pairs;
    for (size_t i = 0; i < stored.pairs.size(); ++i)
        stored.pairs[i].id = ids.value()[i];
    return stored;
}

} // namespace d2dpo
