// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/pairscorer.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <random>

#include <torch/torch.h>

#include "base/failurereport.h"
#include "diffusion/implicitreward.h"
#include "facades/checkpointrecord.h"
#include "facades/openmodel.h"
#include "model/device.h"

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
    auto impl = std::make_unique<Impl>();
    auto policy = openModel(policyPath, device);
    if (!policy)
        return makeError(policy.error());
    impl->policy = std::move(policy.value());
    auto reference = openModel(referencePath, impl->policy.device);
    if (!reference)
        return makeError(reference.error());
    impl->reference = std::move(reference.value());
    if (Status same = requireTask(*impl->reference.task, impl->policy.task->key(), "the reference " + referencePath);
        !same)
        return makeError(same.error());
    const CheckpointInfo& info = impl->policy.checkpoint.info;
    std::error_code ec;
    const std::string absolute = std::filesystem::absolute(policyPath, ec).string();
    impl->record = modelRecordFor(info, ec ? policyPath : absolute, std::filesystem::path(policyPath).filename().string());
    if (auto trained = dpoConfigFromJson(info.trainingJson); trained)
        impl->dpo.beta = trained->beta;
    return std::unique_ptr<PairScorer>(new PairScorer(std::move(impl)));
}

Result<std::vector<double>> PairScorer::margins(const std::vector<ShownPair>& pairs, uint64_t seed, int draws)
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
        const auto margins = implicitRewardMargins(m_impl->policy.checkpoint.model, m_impl->reference.checkpoint.model,
                                                   *m_impl->policy.noise, first, second, m_impl->dpo, estimate, generator)
                                 .contiguous();
        return std::vector<double>(margins.data_ptr<double>(), margins.data_ptr<double>() + margins.numel());
    } catch (const std::exception& e) {
        return makeError("scoring pairs failed: " + userMessage(e));
    }
}

Result<std::string> referencePathOf(PreferenceStore& store, const ModelRecord& policy)
{
    if (policy.parentId.empty())
        return policy.path;
    auto parent = store.model(policy.parentId);
    if (!parent)
        return makeError(parent.error());
    if (!parent.value())
        return makeError("the model it was fine-tuned from (" + policy.parentId +
                         ") is not in the store: name its checkpoint with --reference");
    return parent.value()->path;
}

Result<std::string> referencePathOf(PreferenceStore& store, const std::string& checkpointPath)
{
    auto models = store.models();
    if (!models)
        return makeError(models.error());
    std::error_code ec;
    for (const ModelRecord& model : models.value())
        if (model.path == checkpointPath || std::filesystem::equivalent(model.path, checkpointPath, ec))
            return referencePathOf(store, model);
    return checkpointPath;
}

std::vector<size_t> leastSureFirst(const std::vector<double>& margins, uint64_t seed)
{
    std::vector<size_t> order(margins.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::mt19937_64 random(seed);
    std::shuffle(order.begin(), order.end(), random);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return std::abs(margins[a]) < std::abs(margins[b]); });
    return order;
}

Result<LeastSurePairs> generateLeastSure(PairGenerator& generator, PairScorer& scorer, int64_t count,
                                         int64_t candidatesPerPair, uint64_t seed, const SamplingConfig& sampling,
                                         int draws)
{
    if (candidatesPerPair < 1 || candidatesPerPair > 1000)
        return makeError("the candidate pairs per pair kept must be in 1..1000");
    if (generator.model().taskKey != scorer.taskKey())
        return makeError("the scoring model is of task " + scorer.taskKey() + ", the pairs of " +
                         generator.model().taskKey);
    auto batch = generator.generate(count * candidatesPerPair, seed, sampling);
    if (!batch)
        return makeError(batch.error());
    auto margins = scorer.margins(batch->pairs, seed, draws);
    if (!margins)
        return makeError(margins.error());
    LeastSurePairs out;
    out.candidates = int64_t(batch->pairs.size());
    out.scoredBy = scorer.policy().id;
    double all = 0, kept = 0;
    for (double m : margins.value())
        all += std::abs(m);
    for (size_t index : leastSureFirst(margins.value(), seed)) {
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
