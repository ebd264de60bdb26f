// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/dporesume.h"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>
#include <torch/types.h>

#include "io/checkpoint.h"
#include "train/dpotrainer.h"

namespace d2dpo {

using nlohmann::json;

Result<ResumePoint> findResumePoint(PreferenceStore& store, int64_t runId)
{
    auto run = store.run(runId);
    if (!run)
        return makeError(run.error());
    if (!run->has_value())
        return makeError("the store has no run " + std::to_string(runId));
    const RunRecord& record = *run.value();
    if (record.kind != RunKind::D2dpo)
        return makeError("run " + std::to_string(runId) + " is not a D2-DPO run (its kind: " + toString(record.kind) +
                         "); only D2-DPO runs resume");
    if (!isResumable(record.status))
        return makeError("run " + std::to_string(runId) + " is " + toString(record.status) +
                         "; only a stopped or interrupted run can be resumed");
    auto models = store.models();
    if (!models)
        return makeError(models.error());
    // The run's checkpoints are named step-NNNNNN.d2dpo (more digits past a million steps): the
    // longest, then greatest, name is the newest.
    const auto later = [](const std::string& a, const std::string& b) {
        return a.size() != b.size() ? a.size() > b.size() : a > b;
    };
    const ModelRecord* newest = nullptr;
    for (const ModelRecord& m : models.value())
        if (m.runId == runId && (!newest || later(m.path, newest->path)))
            newest = &m;
    ResumePoint point;
    if (!newest)
        return point;
    auto checkpoint = loadCheckpoint(newest->path, torch::kCPU);
    if (!checkpoint)
        return makeError("the run's newest checkpoint cannot be resumed from: " + checkpoint.error());
    point.step = checkpoint->info.step;
    point.checkpointPath = newest->path;
    point.modelId = newest->id;
    std::error_code ec;
    if (const std::string adam = optimizerStatePath(newest->path); std::filesystem::is_regular_file(adam, ec))
        point.optimizerState = adam;
    return point;
}

Result<DpoJobSpec> resumeJobSpec(const std::string& storePath, int64_t runId)
{
    auto store = PreferenceStore::open(storePath, PreferenceStore::OpenMode::MustExist);
    if (!store)
        return makeError(store.error());
    auto run = store.value()->run(runId);
    if (!run)
        return makeError(run.error());
    if (!run->has_value())
        return makeError("the store has no run " + std::to_string(runId));
    try {
        const json config = json::parse(run.value()->configJson);
        DpoJobSpec spec;
        spec.resumeRunId = runId;
        spec.storePath = storePath;
        auto dpo = dpoConfigFromJson(config.at("dpo").dump());
        if (!dpo)
            return makeError(dpo.error());
        spec.dpo = dpo.value();
        auto schedule = dpoScheduleFromJson(config.at("dpo").dump());
        if (!schedule)
            return makeError(schedule.error());
        spec.schedule = schedule.value();
        auto sampling = samplingConfigFromJson(config.at("sampling").dump());
        if (!sampling)
            return makeError(sampling.error());
        spec.sampling = sampling.value();
        const std::string source = config.at("preferences").at("source").get<std::string>();
        const json& preferences = config.at("preferences");
        spec.source = source == "store-labels"                ? PreferenceSource::StoreLabels
                      : source == "measurements"              ? PreferenceSource::Measurements
                      : source == "store-labels+measurements" ? PreferenceSource::LabelsAndMeasurements
                                                              : PreferenceSource::RulePairs;
        if (spec.source == PreferenceSource::Measurements || spec.source == PreferenceSource::LabelsAndMeasurements) {
            spec.measured.assay = preferences.at("assay").get<std::string>();
            spec.measured.strategy = preferences.at("strategy").get<std::string>();
            spec.measured.k = preferences.at("k").get<double>();
            spec.measured.margin = preferences.at("margin").get<double>();
            spec.measured.budget = preferences.at("budget").get<int64_t>();
            spec.measured.seed = preferences.at("pair_seed").get<uint64_t>();
            spec.measured.bestShare = preferences.at("best_share").get<double>();
            spec.measured.heldOut = preferences.value("held_out", 0.0);
            spec.measured.split = preferences.value("split", std::string("random"));
            spec.grouped = preferences.value("grouped", false);
            spec.measured.splitSeed = preferences.value("split_seed", uint64_t(1));
            spec.labelsWeight = preferences.at("labels_weight").get<double>();
            spec.measurementsWeight = preferences.at("measurements_weight").get<double>();
        }
        spec.rulePairs = config.value("rule_pairs", config.at("preferences").value("pairs", int64_t(20000)));
        spec.rule = config.value("rule", source.rfind("rule:", 0) == 0 ? source.substr(5) : std::string());
        spec.labelers = config.value("labelers", std::vector<std::string>());
        spec.seed = config.at("seed").get<uint64_t>();
        spec.eta = config.at("eta").get<double>();
        spec.device = config.value("device", std::string("auto"));
        spec.referencePath = config.at("reference_path").get<std::string>();
        spec.outputFolder = config.at("output_folder").get<std::string>();
        spec.evaluateReference = false;
        return spec;
    } catch (const json::exception& e) {
        return makeError("run " + std::to_string(runId) + "'s recorded settings cannot be read: " + e.what());
    }
}

} // namespace d2dpo
