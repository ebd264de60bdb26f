// SPDX-License-Identifier: GPL-3.0-or-later
#include "facades/storedmodel.h"

#include <filesystem>

namespace d2dpo {

Result<std::optional<ModelRecord>> modelStoredAt(ModelCatalog& store, const std::string& path)
{
    auto models = store.models();
    if (!models)
        return makeError(models.error());
    for (const ModelRecord& model : models.value()) {
        std::error_code same;
        if (std::filesystem::equivalent(model.path, path, same) && !same)
            return std::optional(model);
    }
    return std::optional<ModelRecord>();
}

} // namespace d2dpo
