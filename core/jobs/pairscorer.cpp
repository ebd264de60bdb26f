// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/pairscorer.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <filesystem>
#include <numeric>
#include <random>

#include <torch/torch.h>

#include "base/failurereport.h"
#include "diffusion/implicitreward.h"
#include "diffusion/sequencescore.h"
#include "facades/checkpointrecord.h"
#include "facades/openmodel.h"
#include "model/device.h"
#include "train/evaluation.h"

namespace d2dpo {

struct PairScorer::Impl {
    OpenedModel policy;
    OpenedModel reference;
    ModelRecord record;
    DpoConfig dpo; ///< beta as the policy was trained with (it scales every margin alike)
};

PairScorer::PairScorer(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
PairScorer::~PairScorer() = default;

const ModelRecord& PairScorer::policy() const { return m_impl->record; }
const std::string& PairScorer::taskKey() const { return m_impl->record.taskKey; }

Result<std::unique_ptr<PairScorer>> PairScorer::load(const std::string& policyPath, const std::string& referencePath,
                                                     const std::string& device)
{
    return load(policyPath, [&](const ModelRecord&) -> Result<std::string> { return referencePath; }, device);
}

Result<std::unique_ptr<PairScorer>> PairScorer::load(const std::string& policyPath, const ReferenceFinder& findReference,
                                                     const std::string& device)
{
    auto impl = std::make_unique<Impl>();
    auto policy = openModel(policyPath, device);
    if (!policy)
        return makeError(policy.error());
    impl->policy = std::move(policy.value());
    const CheckpointInfo& info = impl->policy.checkpoint.info;
    std::error_code ec;
    const std::string absolute = std::filesystem::absolute(policyPath, ec).string();
    impl->record = modelRecordFor(info, ec ? policyPath : absolute, std::filesystem::path(policyPath).filename().string());
    auto referencePath = findReference(impl->record);
    if (!referencePath)
        return makeError(referencePath.error());
    auto reference = openModel(referencePath.value(), impl->policy.device);
    if (!reference)
        return makeError("the reference (the model " + impl->record.name + " was fine-tuned from): " +
                         reference.error());
    impl->reference = std::move(reference.value());
    // Margins against any other model than the one it was fine-tuned from would order pairs by
    // what neither model learnt: the lineage must match.
    const std::string& expected = info.parentId.empty() ? info.id : info.parentId;
    if (impl->reference.checkpoint.info.id != expected)
        return makeError(referencePath.value() + " (model " + impl->reference.checkpoint.info.id + ") is not the model " +
                         impl->record.name + " was fine-tuned from (" +
                         (info.parentId.empty() ? "none: it is pretrained" : info.parentId) + ")");
    if (Status same = requireTask(*impl->reference.task, impl->policy.task->key(), "the reference " + referencePath.value());
        !same)
        return makeError(same.error());
    if (auto trained = dpoConfigFromJson(info.trainingJson); trained)
        impl->dpo.beta = trained->beta;
    return std::unique_ptr<PairScorer>(new PairScorer(std::move(impl)));
}

bool PairScorer::selfReferenced() const
{
    return m_impl->policy.checkpoint.info.id == m_impl->reference.checkpoint.info.id;
}

namespace {

/// Corrupted sequences per scoring pass (each of both models): 8192 for the small models, fewer for
/// a large model or long sequences, about 1e10 parameter-positions a pass (a second or so on a CPU
/// core), so that the count of pairs scored moves and a stop is heard between passes. Set by the
/// model's shape, never by a timing: a seed gives the same margins on every machine.
int64_t scoringRowsPerPass(int64_t parameters, int64_t length)
{
    constexpr double kParameterPositionsPerPass = 1e10;
    const double perRow = double(std::max<int64_t>(1, parameters)) * double(std::max<int64_t>(1, length));
    return std::clamp<int64_t>(int64_t(kParameterPositionsPerPass / perRow), 64, MarginEstimate{}.rows);
}

} // namespace

Result<std::vector<double>> PairScorer::margins(const std::vector<ShownPair>& pairs, uint64_t seed, int draws,
                                                const std::function<void(int64_t, int64_t)>& progress)
{
    if (draws < 1 || draws > 4096)
        return makeError("the margin's draws per pair must be in 1..4096");
    const Task& task = *m_impl->policy.task;
    std::vector<int64_t> left, right;
    for (const ShownPair& pair : pairs) {
        const std::string name = "pair " + std::to_string(pair.id);
        if (!pair.task.empty() && pair.task != task.key())
            return makeError(name + " is of task " + pair.task + ", not the model's (" + task.key() + ")");
        for (const auto& [text, into] : {std::pair{&pair.left, &left}, std::pair{&pair.right, &right}}) {
            auto tokens = task.parse(*text);
            if (!tokens)
                return makeError(name + ": " + tokens.error());
            into->insert(into->end(), tokens->begin(), tokens->end());
        }
    }
    if (pairs.empty())
        return std::vector<double>{};
    try {
        const auto shape = std::vector<int64_t>{int64_t(pairs.size()), task.length()};
        const auto device = m_impl->policy.device;
        const auto first = torch::tensor(left).view(shape).to(device);
        const auto second = torch::tensor(right).view(shape).to(device);
        auto generator = makeGenerator(seed, device);
        MarginEstimate estimate;
        estimate.draws = draws;
        estimate.rows = scoringRowsPerPass(parameterCount(m_impl->policy.checkpoint.model), task.length());
        estimate.progress = progress;
        const auto margins = implicitRewardMargins(m_impl->policy.checkpoint.model, m_impl->reference.checkpoint.model,
                                                   *m_impl->policy.noise, first, second, m_impl->dpo, estimate, generator)
                                 .contiguous();
        return std::vector<double>(margins.data_ptr<double>(), margins.data_ptr<double>() + margins.numel());
    } catch (const std::exception& e) {
        return makeError("scoring pairs failed: " + userMessage(e));
    }
}

Result<std::vector<double>> PairScorer::likelihoodBounds(const std::vector<std::string>& sequences, Which which,
                                                         uint64_t seed, int draws)
{
    if (draws < 1 || draws > 4096)
        return makeError("the bound's draws per sequence must be in 1..4096");
    const Task& task = *m_impl->policy.task;
    std::vector<int64_t> tokens;
    for (size_t i = 0; i < sequences.size(); ++i) {
        auto parsed = task.parse(sequences[i]);
        if (!parsed)
            return makeError("sequence " + std::to_string(i + 1) + ": " + parsed.error());
        tokens.insert(tokens.end(), parsed->begin(), parsed->end());
    }
    if (sequences.empty())
        return std::vector<double>{};
    OpenedModel& model = which == Which::Policy ? m_impl->policy : m_impl->reference;
    try {
        const auto device = m_impl->policy.device;
        const auto x1 = torch::tensor(tokens).view({int64_t(sequences.size()), task.length()}).to(device);
        auto generator = makeGenerator(seed, device);
        const int64_t rows = scoringRowsPerPass(parameterCount(model.checkpoint.model), task.length());
        const auto bounds = elboScores(model.checkpoint.model, *model.noise, x1, draws, rows, generator).contiguous();
        return std::vector<double>(bounds.data_ptr<double>(), bounds.data_ptr<double>() + bounds.numel());
    } catch (const std::exception& e) {
        return makeError("scoring sequences failed: " + userMessage(e));
    }
}

Result<std::string> referencePathOf(ModelCatalog& store, const ModelRecord& policy)
{
    if (policy.parentId.empty())
        return policy.path;
    auto parent = store.model(policy.parentId);
    if (!parent)
        return makeError(parent.error());
    if (!parent.value())
        return makeError("the model it was fine-tuned from (" + policy.parentId +
                         ") is not in the store (from the command line, name its checkpoint with --reference)");
    return parent.value()->path;
}

Result<std::string> referencePathOf(ModelCatalog& store, const std::string& checkpointPath)
{
    auto models = store.models();
    if (!models)
        return makeError(models.error());
    std::error_code ec;
    for (const ModelRecord& model : models.value())
        if (model.path == checkpointPath || std::filesystem::equivalent(model.path, checkpointPath, ec))
            return referencePathOf(store, model);
    return makeError("the store does not know the model at " + checkpointPath);
}

std::vector<size_t> leastSureFirst(const std::vector<double>& margins, uint64_t seed)
{
    std::vector<size_t> order(margins.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::mt19937_64 random(seed);
    std::shuffle(order.begin(), order.end(), random);
    // A margin that is not a number sorts last (a strict weak order even then).
    const auto key = [&](size_t i) { return std::isnan(margins[i]) ? INFINITY : std::abs(margins[i]); };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
    return order;
}

const char* toString(PairPick pick) { return pick == PairPick::Surest ? "surest" : "least-sure"; }

Result<ScoredPairs> generateByMargin(PairGenerator& generator, PairScorer& scorer, PairPick pick, int64_t count,
                                     int64_t candidatesPerPair, uint64_t seed, const SamplingConfig& sampling,
                                     int draws, const std::function<void(int64_t, int64_t)>& progress,
                                     const std::function<void(int64_t, int64_t)>& scoring, const StopToken* stop)
{
    if (candidatesPerPair < 1 || candidatesPerPair > 1000)
        return makeError("the candidate pairs per pair kept must be in 1..1000");
    if (generator.model().taskKey != scorer.taskKey())
        return makeError("the scoring model is of task " + scorer.taskKey() + ", the pairs of " +
                         generator.model().taskKey);
    if (count < 1 || count * candidatesPerPair > kMaxCandidatePairs)
        return makeError("asking for " + std::to_string(count) + " pairs from " + std::to_string(candidatesPerPair) +
                         " candidates each: at most " + std::to_string(kMaxCandidatePairs) + " candidate pairs");
    if (scorer.selfReferenced()) {
        // A pretrained model is sure of nothing (every margin 0): its pairs stay as drawn, unscored,
        // so that they never go ahead of pairs a fine-tuned model scored.
        auto drawn = generator.generate(count, seed, sampling, progress, stop);
        if (!drawn)
            return makeError(drawn.error());
        ScoredPairs out;
        out.pairs = std::move(drawn->pairs);
        out.candidates = int64_t(out.pairs.size());
        return out;
    }
    auto batch = generator.generate(count * candidatesPerPair, seed, sampling, progress, stop);
    if (!batch)
        return makeError(batch.error());
    // The scoring's progress is heard at each pass of the models: a stop ends it there.
    const auto scoredOrStopped = [&scoring, stop](int64_t done, int64_t total) {
        if (stop && stop->stopRequested())
            throw EvaluationStopped();
        if (scoring)
            scoring(done, total);
    };
    auto margins = scorer.margins(batch->pairs, seed, draws, scoredOrStopped);
    if (!margins && stop && stop->stopRequested())
        return makeError(PairGenerator::kSamplingStopped);
    if (!margins)
        return makeError(margins.error());
    ScoredPairs out;
    out.candidates = int64_t(batch->pairs.size());
    out.scoredBy = scorer.policy().id;
    double all = 0, kept = 0;
    for (double m : margins.value())
        all += std::abs(m);
    std::vector<size_t> order = leastSureFirst(margins.value(), seed);
    if (pick == PairPick::Surest)
        std::reverse(order.begin(), order.end());
    for (size_t index : order) {
        if (int64_t(out.pairs.size()) >= count)
            break;
        out.pairs.push_back(batch->pairs[index]);
        out.margins.push_back(margins.value()[index]);
        kept += std::abs(margins.value()[index]);
    }
    out.candidatesMeanAbs = out.candidates ? all / double(out.candidates) : 0;
    out.keptMeanAbs = out.pairs.empty() ? 0 : kept / double(out.pairs.size());
    return out;
}

} // namespace d2dpo
