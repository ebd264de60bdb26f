// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/comparisonpairs.h"

#include <algorithm>
#include <memory>
#include <random>

#include "labeling/generatedpairs.h"

namespace d2dpo {

Result<PreparedComparison> prepareComparison(const std::vector<std::string>& checkpoints, const std::string& device,
                                             int64_t perTwoModels, uint64_t seed, const SamplingConfig& sampling,
                                             const StopToken* stopToken, const ComparisonProgress& progress)
{
    if (checkpoints.size() < 2)
        return makeError("name two models or more");
    const auto stop = [&] { return stopToken && stopToken->stopRequested(); };
    PreparedComparison prepared;
    std::vector<std::unique_ptr<PairGenerator>> generators;
    std::vector<PairGenerator*> pointers;
    for (const std::string& path : checkpoints) {
        if (stop())
            return PreparedComparison{};
        auto generator = PairGenerator::load(path, device);
        if (!generator)
            return makeError(generator.error());
        for (const ModelRecord& known : prepared.models)
            if (known.id == generator.value()->model().id)
                return makeError(path + " is a model named twice (id " + known.id + ")");
        prepared.models.push_back(generator.value()->model());
        pointers.push_back(generator.value().get());
        generators.push_back(std::move(generator.value()));
    }
    if (stop())
        return PreparedComparison{};
    auto draw = drawComparisonPairs(pointers, perTwoModels, seed, sampling, stopToken, progress);
    if (!draw)
        return makeError(draw.error());
    if (stop())
        return PreparedComparison{};
    if (draw->pairs.empty())
        return makeError("the models drew the same sequence every time: there is nothing to compare");
    prepared.draw = std::move(draw.value());
    return prepared;
}

Result<int64_t> storeComparison(PreferenceStore& store, const PreparedComparison& prepared)
{
    if (prepared.models.empty())
        return makeError("there is no comparison to store");
    std::vector<std::string> ids;
    for (const ModelRecord& model : prepared.models) {
        if (auto name = recordModel(store, model); !name)
            return makeError(name.error());
        ids.push_back(model.id);
    }
    return store.addComparison(prepared.models.front().taskKey, ids, prepared.draw.pairs);
}

Result<ComparisonDraw> drawComparisonPairs(const std::vector<PairGenerator*>& generators, int64_t perTwoModels,
                                           uint64_t seed, const SamplingConfig& sampling, const StopToken* stop,
                                           const ComparisonProgress& progress)
{
    const int64_t models = int64_t(generators.size());
    if (models < 2)
        return makeError("a comparison needs two models or more");
    if (perTwoModels < 1)
        return makeError("ask for at least one pair for each two models");
    const std::string task = generators[0]->model().taskKey;
    for (const PairGenerator* g : generators)
        if (g->model().taskKey != task)
            return makeError("models of different tasks cannot be compared (" + task + " and " + g->model().taskKey +
                             ")");
    // Each model draws once what all its comparisons need, with a seed of its own.
    const int64_t perModel = perTwoModels * (models - 1);
    std::vector<std::vector<std::string>> samples;
    for (int64_t i = 0; i < models; ++i) {
        const double before = double(i * perModel);
        auto drawn = generators[size_t(i)]->sample(
            perModel, seed + 1'000'003ULL * uint64_t(i + 1), sampling, stop, [&](double done, int64_t) {
                if (progress)
                    progress(before + done, models * perModel);
            });
        if (!drawn && stop && stop->stopRequested())
            return ComparisonDraw{};
        if (!drawn)
            return makeError(generators[size_t(i)]->model().name + ": " + drawn.error());
        samples.push_back(std::move(drawn.value()));
    }
    std::vector<size_t> used(size_t(models), 0);
    std::mt19937_64 random(seed);
    std::bernoulli_distribution firstOnLeft(0.5);
    ComparisonDraw draw;
    for (int64_t i = 0; i < models; ++i)
        for (int64_t j = i + 1; j < models; ++j)
            for (int64_t k = 0; k < perTwoModels; ++k) {
                const std::string& a = samples[size_t(i)][used[size_t(i)]++];
                const std::string& b = samples[size_t(j)][used[size_t(j)]++];
                if (a == b) {
                    ++draw.sameSequence;
                    continue;
                }
                const std::string& idA = generators[size_t(i)]->model().id;
                const std::string& idB = generators[size_t(j)]->model().id;
                const bool aLeft = firstOnLeft(random);
                draw.pairs.push_back({0, aLeft ? a : b, aLeft ? b : a, aLeft ? idA : idB, aLeft ? idB : idA, task});
            }
    // Stored (and so queued) in a random order: with three models or more, runs of one pairing in
    // the queue would let a labeler guess which two models a pair compares.
    std::shuffle(draw.pairs.begin(), draw.pairs.end(), random);
    return draw;
}

} // namespace d2dpo
