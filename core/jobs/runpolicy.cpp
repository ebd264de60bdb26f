// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/runpolicy.h"

#include <algorithm>
#include <ctime>
#include <map>
#include <filesystem>

#include <nlohmann/json.hpp>

namespace d2dpo {

using nlohmann::json;

std::string newRunFolder(const std::string& storePath, const std::string& referenceModelId)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path store = fs::absolute(storePath, ec);
    if (ec)
        store = storePath;
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
    const fs::path base = store.parent_path() / "runs" / (std::string(stamp) + "-" + referenceModelId);
    // Two runs started within the same second get their own folders too.
    fs::path folder = base;
    for (int n = 2; fs::exists(folder, ec); ++n)
        folder = base.string() + "-" + std::to_string(n);
    return folder.string();
}

void checkpointAtEveryEvaluation(DpoConfig& config) { config.checkpointEvery = config.evalEvery; }

void leaveACoreForTheGui(DpoJobSpec& job) { job.reservedCores = 1; }

UsablePairs countUsablePairs(const std::vector<PreferenceRecord>& preferences, const std::string& task,
                             const std::vector<std::string>& labelers)
{
    UsablePairs pairs;
    for (const PreferenceRecord& r : preferences) {
        if (r.task != task)
            ++pairs.otherTask;
        else if (!labelers.empty() && std::find(labelers.begin(), labelers.end(), r.labeler) == labelers.end())
            ++pairs.otherLabelers;
        else
            ++pairs.usable;
    }
    return pairs;
}

bool isSimulatedLabeler(const std::string& labeler) { return labeler.rfind("rule:", 0) == 0; }

std::vector<LabelerCount> labelersOf(const std::vector<PreferenceRecord>& preferences, const std::string& task)
{
    std::map<std::string, int64_t> counts;
    for (const PreferenceRecord& r : preferences)
        if (r.task == task)
            ++counts[r.labeler];
    std::vector<LabelerCount> out;
    for (const auto& [labeler, count] : counts)
        out.push_back({labeler, count, isSimulatedLabeler(labeler)});
    std::stable_sort(out.begin(), out.end(),
                     [](const LabelerCount& a, const LabelerCount& b) { return !a.simulated && b.simulated; });
    return out;
}

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
                           {"status", r.status},
                           {"device", r.device},
                           {"reference_model_id", r.referenceModelId},
                           {"started_at", r.startedAt},
                           {"finished_at", r.finishedAt},
                           {"config", config}}
                          .dump();
    return options;
}

Result<std::optional<ModelRecord>> modelStoredAt(PreferenceStore& store, const std::string& path)
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
