// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/modelinstore.h"

#include <filesystem>

#include "facades/checkpointrecord.h"
#include "facades/storedmodel.h"
#include "io/checkpoint.h"
#include "store/preferencestore.h"

namespace d2dpo {

Status refuseOutputOfAStoredModel(const std::string& storePath, const std::string& outputPath)
{
    if (storePath.empty() || !std::filesystem::exists(storePath))
        return Ok{};
    auto store = PreferenceStore::open(storePath, PreferenceStore::OpenMode::MustExist);
    if (!store)
        return makeError(store.error());
    auto stored = modelStoredAt(*store.value(), outputPath);
    if (!stored)
        return makeError(stored.error());
    if (const auto& m = stored.value())
        return makeError("checkpoint '" + outputPath + "': the store records it as the model " + m->id + " (" +
                         m->name + "); writing over it would change that model's weights. Choose another file; "
                         "nothing was written");
    return Ok{};
}

Status addWrittenModel(const std::string& storePath, const CheckpointInfo& info, const std::string& outputPath,
                       const std::string& name)
{
    auto store = PreferenceStore::open(storePath);
    if (!store)
        return makeError("the model was written to " + outputPath + " but not added to the store: " + store.error());
    std::error_code ec;
    const std::string absolute = std::filesystem::absolute(outputPath, ec).string();
    const std::string shown = name.empty() ? std::filesystem::path(outputPath).filename().string() : name;
    if (Status s = store.value()->addModel(modelRecordFor(info, ec ? outputPath : absolute, shown)); !s)
        return makeError("the model was written to " + outputPath + " but not added to the store: " + s.error());
    return Ok{};
}

} // namespace d2dpo
