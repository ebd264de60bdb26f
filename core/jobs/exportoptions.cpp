// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/exportoptions.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "facades/storedmodel.h"

namespace d2dpo {

using nlohmann::json;

ExportOptions exportOptionsFor(PreferenceStore& store, const ModelRecord& model)
{
    ExportOptions options;
    if (!model.runId)
        return options;
    auto run = store.run(*model.runId);
    if (!run || !run.value())
        return options;
    const RunRecord& r = *run.value();
    json config = json::parse(r.configJson, nullptr, false);
    if (!config.is_object())
        config = json::object();
    const json prefs = config.contains("preferences") && config["preferences"].is_object() ? config["preferences"]
                                                                                           : json::object();
    options.preferenceCountsJson = prefs.dump();
    options.runJson = json{{"run_id", r.id},
                           {"status", toString(r.status)},
                           {"device", r.device},
                           {"reference_model_id", r.referenceModelId},
                           {"started_at", r.startedAt},
                           {"finished_at", r.finishedAt},
                           {"config", config}}
                          .dump();
    return options;
}

Result<ExportOptions> exportOptionsForCheckpoint(const std::string& storePath, const std::string& checkpointPath)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    const ExportOptions defaults; // a named object: GCC 12 misreads a temporary's string as uninitialised
    if (storePath.empty() || !fs::exists(storePath, ec))
        return defaults;
    auto store = PreferenceStore::open(storePath);
    if (!store)
        return makeError(store.error());
    auto model = modelStoredAt(*store.value(), checkpointPath);
    if (!model)
        return makeError(model.error());
    if (model.value())
        return exportOptionsFor(*store.value(), *model.value());
    return defaults;
}

} // namespace d2dpo
