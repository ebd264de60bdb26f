// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/trainingpairs.h"

#include <nlohmann/json.hpp>

#include "base/batchadvice.h"
#include "jobs/assaypairs.h"
#include "model/device.h"
#include "store/preferencestore.h"
#include "tasks/task.h"

namespace d2dpo {

namespace {

using Pairs = std::pair<torch::Tensor, torch::Tensor>;

Pairs tensorsOf(const std::vector<int64_t>& winners, const std::vector<int64_t>& losers, int64_t length)
{
    const int64_t count = int64_t(winners.size()) / length;
    return {torch::tensor(winners).view({count, length}), torch::tensor(losers).view({count, length})};
}

/// The store's selection (PreferenceStore::preferences) of the task's decisive labels.
Result<Pairs> labelPairs(const DpoJobSpec& spec, PreferenceStore& store, const Task& task,
                         const std::function<void(const std::string&)>& log)
{
    auto counted = store.usablePairs(task.key(), spec.labelers);
    if (!counted)
        return makeError(counted.error());
    if (counted->otherTask > 0)
        log(std::to_string(counted->otherTask) + " labelled pairs of other tasks than the reference's (" + task.key() +
            ") are left out");
    if (counted->otherLabelers > 0)
        log(std::to_string(counted->otherLabelers) + " labelled pairs by labelers not chosen are left out");
    auto records = store.preferences(task.key(), spec.labelers);
    if (!records)
        return makeError(records.error());
    std::vector<int64_t> winners, losers;
    for (const PreferenceRecord& r : records.value())
        for (const auto& [text, into] : {std::pair{&r.chosen, &winners}, std::pair{&r.rejected, &losers}}) {
            auto tokens = task.parse(*text);
            if (!tokens)
                return makeError("a stored preference cannot be read: " + tokens.error());
            into->insert(into->end(), tokens->begin(), tokens->end());
        }
    if (winners.empty())
        return makeError("the store has no decisive labels (left/right) of this task (" + task.key() + ")" +
                         (spec.labelers.empty() ? std::string() : " by the chosen labelers") +
                         " to train on; label some pairs first");
    return tensorsOf(winners, losers, task.length());
}

/// Pairs made from the assay's values (jobs/assaypairs.h), the same for the same seed.
Result<Pairs> measuredPairs(const DpoJobSpec& spec, PreferenceStore& store, const Task& task, TrainingPairs& out)
{
    auto made = assayPairs(store, spec.measured);
    if (!made)
        return makeError(made.error());
    if (made->assay.task != task.key())
        return makeError("the assay '" + spec.measured.assay + "' measured sequences of the task " + made->assay.task +
                         ", not of the reference's (" + task.key() + ")");
    std::vector<std::vector<int64_t>> tokens(made->sequences.size());
    for (size_t i = 0; i < made->sequences.size(); ++i) {
        auto parsed = task.parse(made->sequences[i].sequence);
        if (!parsed)
            return makeError("a measured sequence cannot be read: " + parsed.error());
        tokens[i] = std::move(parsed.value());
    }
    std::vector<int64_t> winners, losers;
    for (const MeasuredPair& p : made->pairs.pairs) {
        winners.insert(winners.end(), tokens[p.winner].begin(), tokens[p.winner].end());
        losers.insert(losers.end(), tokens[p.loser].begin(), tokens[p.loser].end());
    }
    out.measuredSequences = int64_t(made->pairs.sequencesUsed);
    out.measuredDescription = made->pairs.description;
    return tensorsOf(winners, losers, task.length());
}

bool usesLabels(PreferenceSource s)
{
    return s == PreferenceSource::StoreLabels || s == PreferenceSource::LabelsAndMeasurements;
}
bool usesMeasurements(PreferenceSource s)
{
    return s == PreferenceSource::Measurements || s == PreferenceSource::LabelsAndMeasurements;
}

} // namespace

Result<TrainingPairs> gatherTrainingPairs(const DpoJobSpec& spec, PreferenceStore* store, const Task& task,
                                          torch::Device device, const std::function<void(const std::string&)>& log)
{
    TrainingPairs out;
    if (spec.source == PreferenceSource::RulePairs) {
        auto generator = makeGenerator(spec.seed + 2000, device);
        auto made = task.rulePairs(spec.rulePairs, generator, device);
        if (!made)
            return makeError(made.error());
        std::tie(out.winners, out.losers) = made.value();
        out.rulePairs = out.winners.size(0);
        log(std::to_string(spec.rulePairs) + " rule-made pairs (" + task.rule()->describe() + ")");
        return out;
    }
    if (!store)
        return makeError("training on the experts' labels or on measurements needs a preference store");
    std::vector<torch::Tensor> winners, losers, weights;
    if (usesLabels(spec.source)) {
        auto labels = labelPairs(spec, *store, task, log);
        if (!labels)
            return makeError(labels.error());
        out.labelPairs = labels->first.size(0);
        winners.push_back(labels->first);
        losers.push_back(labels->second);
        weights.push_back(torch::full({out.labelPairs}, spec.labelsWeight / double(out.labelPairs)));
        log(std::to_string(out.labelPairs) + " labelled pairs from the store (ties and skips left out)");
    }
    if (usesMeasurements(spec.source)) {
        auto measured = measuredPairs(spec, *store, task, out);
        if (!measured)
            return makeError(measured.error());
        out.measuredPairs = measured->first.size(0);
        winners.push_back(measured->first);
        losers.push_back(measured->second);
        weights.push_back(torch::full({out.measuredPairs}, spec.measurementsWeight / double(out.measuredPairs)));
        log(std::to_string(out.measuredPairs) + " measured pairs from the assay '" + spec.measured.assay + "', of " +
            std::to_string(out.measuredSequences) + " sequences (" + out.measuredDescription + ")");
    }
    out.winners = torch::cat(winners);
    out.losers = torch::cat(losers);
    if (const std::string warning = batchLargerThanPairsWarning(spec.dpo.batch, out.winners.size(0)); !warning.empty())
        log("warning: " + warning);
    if (winners.size() > 1) {
        out.weights = torch::cat(weights);
        log("each batch draws labels and measurements at " + std::to_string(spec.labelsWeight) + " : " +
            std::to_string(spec.measurementsWeight));
    }
    return out;
}

std::string trainingPairsJson(const DpoJobSpec& spec, const TrainingPairs& pairs, const std::string& rule)
{
    using nlohmann::json;
    const int64_t total = pairs.labelPairs + pairs.measuredPairs + pairs.rulePairs;
    switch (spec.source) {
    case PreferenceSource::RulePairs:
        return json{{"source", "rule:" + rule}, {"pairs", total}}.dump();
    case PreferenceSource::StoreLabels:
        return json{{"source", "store-labels"}, {"pairs", total}}.dump();
    default:
        break;
    }
    const AssayPairsSpec& m = spec.measured;
    return json{{"source", spec.source == PreferenceSource::Measurements ? "measurements" : "store-labels+measurements"},
                {"pairs", total},
                {"label_pairs", pairs.labelPairs},
                {"measured_pairs", pairs.measuredPairs},
                {"assay", m.assay},
                {"strategy", m.strategy},
                {"k", m.k},
                {"margin", m.margin},
                {"budget", m.budget},
                {"pair_seed", m.seed},
                {"best_share", m.bestShare},
                {"held_out", m.heldOut},
                {"split", m.split},
                {"grouped", spec.grouped},
                {"split_seed", m.splitSeed},
                {"labels_weight", spec.labelsWeight},
                {"measurements_weight", spec.measurementsWeight}}
        .dump();
}

} // namespace d2dpo
