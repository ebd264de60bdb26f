// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/pairgenerator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include <torch/torch.h>

#include "base/failurereport.h"
#include "base/samplebudget.h"
#include "facades/checkpointrecord.h"
#include "facades/openmodel.h"
#include "model/device.h"
#include "diffusion/sampler.h"
#include "tasks/task.h"
#include "train/evaluation.h"

namespace d2dpo {

std::vector<ShownPair> formPairs(const std::vector<std::string>& candidates, const std::string& modelId,
                                 int64_t maxPairs, uint64_t seed)
{
    std::vector<size_t> order(candidates.size());
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::mt19937_64 random(seed);
    std::shuffle(order.begin(), order.end(), random);
    std::bernoulli_distribution leftFirst(0.5);

    std::vector<ShownPair> pairs;
    std::vector<size_t> unpaired; // invariant: all equal to each other
    for (size_t index : order) {
        if (int64_t(pairs.size()) >= maxPairs)
            break;
        if (unpaired.empty() || candidates[unpaired.back()] == candidates[index]) {
            unpaired.push_back(index);
            continue;
        }
        const std::string& a = candidates[unpaired.back()];
        const std::string& b = candidates[index];
        unpaired.pop_back();
        const bool aLeft = leftFirst(random);
        pairs.push_back({0, aLeft ? a : b, aLeft ? b : a, modelId, modelId, ""}); // the generator sets the task
    }
    return pairs;
}

struct PairGenerator::Impl {
    LoadedCheckpoint checkpoint;
    std::unique_ptr<Task> task;
    torch::Device device{torch::kCPU};
    ModelRecord record;
};

PairGenerator::PairGenerator(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
PairGenerator::~PairGenerator() = default;

const ModelRecord& PairGenerator::model() const { return m_impl->record; }
int64_t PairGenerator::length() const { return m_impl->task->length(); }

Result<std::unique_ptr<PairGenerator>> PairGenerator::load(const std::string& checkpointPath,
                                                           const std::string& device)
{
    auto opened = openModel(checkpointPath, device);
    if (!opened)
        return makeError(opened.error());
    auto impl = std::make_unique<Impl>();
    impl->checkpoint = std::move(opened->checkpoint);
    impl->task = std::move(opened->task);
    impl->device = opened->device;
    const CheckpointInfo& info = impl->checkpoint.info;
    std::error_code ec;
    const std::string absolute = std::filesystem::absolute(checkpointPath, ec).string();
    impl->record = modelRecordFor(info, ec ? checkpointPath : absolute,
                                  std::filesystem::path(checkpointPath).filename().string());
    return std::unique_ptr<PairGenerator>(new PairGenerator(std::move(impl)));
}

Result<PairSampling> PairGenerator::samplingWithin(double secondsPerPair, const SamplingConfig& fallback)
{
    PairSampling chosen;
    chosen.sampling = fallback;
    const NoiseConfig& noise = m_impl->checkpoint.info.spec.noise;
    const int64_t length = m_impl->task->length();
    try {
        const Denoiser& model = m_impl->checkpoint.model;
        torch::InferenceMode inference;
        const auto tokens = torch::full({2, length}, m_impl->task->vocabSize(),
                                        torch::dtype(torch::kLong).device(m_impl->device));
        const auto t = torch::zeros({2}, torch::dtype(model->parameters().front().scalar_type()).device(m_impl->device));
        auto pass = [&] {
            const auto started = std::chrono::steady_clock::now();
            const auto logits = model->forward(tokens, t);
            (void)logits.sum().item<double>(); // waits for a GPU
            return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        };
        pass(); // warm-up: first-call allocations and a TorchScript graph's optimisation
        chosen.secondsPerPass = std::min(pass(), pass());
    } catch (const std::exception& e) {
        return makeError("timing the model failed: " + userMessage(e));
    }
    if (!exactExists(noise)) {
        chosen.secondsPerPair = chosen.secondsPerPass * (chosen.sampling.sampler == "euler"
                                                             ? chosen.sampling.steps
                                                             : fineSteps(chosen.sampling, length));
    } else if (const int64_t passes = passesWithin(chosen.secondsPerPass, secondsPerPair, length); passes == length) {
        chosen.sampling.sampler = "exact";
        chosen.secondsPerPair = chosen.secondsPerPass * double(length);
    } else {
        chosen.sampling.sampler = "confident";
        chosen.sampling.steps = int(passes);
        chosen.secondsPerPair = chosen.secondsPerPass * chosen.sampling.steps;
    }
    char line[160];
    std::snprintf(line, sizeof line, "%s, about %.2g s a pair here",
                  describeSampling(noise, chosen.sampling, length).c_str(), chosen.secondsPerPair);
    chosen.describe = line;
    return chosen;
}

Result<std::vector<std::string>> PairGenerator::sample(int64_t count, uint64_t seed, const SamplingConfig& sampling,
                                                       const StopToken* stop,
                                                       const std::function<void(double, int64_t)>& progress)
{
    if (count < 1)
        return makeError("ask for at least one sequence");
    if (Status s = validate(sampling); !s)
        return makeError(s.error());
    try {
        const auto sampler = makeSampler(m_impl->checkpoint.model, m_impl->checkpoint.info.spec.noise,
                                         m_impl->task->vocabSize(), sampling);
        auto generator = makeGenerator(seed, m_impl->device);
        return formatRows(*m_impl->task, drawSamples(*sampler, count, 1024, generator, stop, progress));
    } catch (const EvaluationStopped&) {
        return makeError(kSamplingStopped);
    } catch (const std::exception& e) {
        return makeError("sampling failed: " + userMessage(e));
    }
}

Result<PairBatch> PairGenerator::generate(int64_t pairCount, uint64_t seed, const SamplingConfig& sampling,
                                          const std::function<void(int64_t, int64_t)>& progress, const StopToken* stop)
{
    if (pairCount < 1)
        return makeError("ask for at least one pair");
    if (Status s = validate(sampling); !s)
        return makeError(s.error());
    try {
        const auto sampler = makeSampler(m_impl->checkpoint.model, m_impl->checkpoint.info.spec.noise,
                                         m_impl->task->vocabSize(), sampling);
        auto generator = makeGenerator(seed, m_impl->device);
        PairBatch batch;
        std::vector<std::string> candidates;
        // A sharp model repeats itself; draw more until enough distinct pairs exist (bounded).
        for (int round = 0; round < 4; ++round) {
            const int64_t draw = 2 * pairCount * (round + 1);
            // Quarters of at least 32: a progress report every few seconds at protein length,
            // batches still large enough to keep the forward passes efficient.
            const int64_t chunk = std::min<int64_t>(1024, std::max<int64_t>(32, (draw + 3) / 4));
            for (int64_t drawn = 0; drawn < draw; drawn += chunk) {
                const int64_t n = std::min(chunk, draw - drawn);
                // The samples of sampler->sample(n, generator, n), with the stop heard at each pass.
                for (std::string& text : formatRows(*m_impl->task, drawSamples(*sampler, n, n, generator, stop, {})))
                    candidates.push_back(std::move(text));
                if (progress)
                    progress(drawn + n, draw);
            }
            batch.candidates = int64_t(candidates.size());
            batch.pairs = formPairs(candidates, m_impl->record.id, pairCount, seed);
            for (ShownPair& pair : batch.pairs)
                pair.task = m_impl->record.taskKey;
            if (int64_t(batch.pairs.size()) >= pairCount)
                break;
        }
        return batch;
    } catch (const EvaluationStopped&) {
        return makeError(kSamplingStopped);
    } catch (const std::exception& e) {
        return makeError("generating pairs failed: " + userMessage(e));
    }
}

} // namespace d2dpo
