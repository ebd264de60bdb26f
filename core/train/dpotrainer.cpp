// SPDX-License-Identifier: GPL-3.0-or-later
#include "train/dpotrainer.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <sstream>

#include <torch/torch.h>

#include "base/failurereport.h"
#include "base/safeoutput.h"
#include "io/checkpoint.h"
#include "model/device.h"
#include "model/loradenoiser.h"
#include "model/torchscriptdenoiser.h"
#include "train/bestcheckpoint.h"
#include "train/evaluation.h"
#include "diffusion/dpoestimator.h"
#include "diffusion/sampler.h"

namespace d2dpo {

namespace {

/// Thrown inside a step when a stop is asked: the step is abandoned before its update.
struct StepStopped {};

/// The policy a run trains: `start` itself, or with DpoConfig::loraRank adapters on it (the
/// reference then shares its weights). Where adapters cannot be made, `error` says why.
Denoiser policyOf(Denoiser start, const DpoConfig& config, uint64_t seed, std::string& error)
{
    if (config.loraRank <= 0)
        return start;
    auto scripted = std::dynamic_pointer_cast<TorchScriptDenoiser>(start);
    if (!scripted) {
        error = "low-rank adapters are for models brought in as TorchScript; train this model's own weights "
                "(--lora-rank 0)";
        return start;
    }
    auto adapted = LoraDenoiser::adapt(scripted, {config.loraRank, config.loraTargets, seed});
    if (!adapted) {
        error = adapted.error();
        return start;
    }
    return adapted.value();
}

} // namespace

DpoTrainer::DpoTrainer(Denoiser start, const Task& task, const NoiseProcess& noise, DpoTrainerOptions options)
    : m_policy(policyOf(std::move(start), options.dpo(), options.seed(), m_setupError))
    , m_reference(frozenCopy(m_policy))
    , m_task(task)
    , m_noise(noise)
    , m_spec(std::move(options.spec()))
    , m_config(options.dpo())
    , m_schedule(options.schedule())
    , m_sampling(options.sampling())
    , m_seed(options.seed())
    , m_evalSeed(options.evaluationSeed().value_or(options.seed() + 1))
    , m_referenceVsr(options.referenceVsr())
    , m_checkpointFolder(options.checkpointFolder())
    , m_parentId(options.parentId())
{
    if (const auto& resume = options.resume()) {
        m_startStep = resume->step;
        m_resumedCheckpoint = resume->checkpointPath;
        // A resumed run's adapters are recovered from the merged weights its checkpoint holds (a
        // rank-r SVD, jobs/dpojob.cpp): another factorisation of the same B A, so Adam's moments of
        // the earlier A and B would not fit them, and Adam starts afresh.
        if (!isAdapted())
            m_optimizerStateToLoad = resume->optimizerState;
    }
}

void DpoTrainer::setPreferences(const torch::Tensor& winners, const torch::Tensor& losers)
{
    const auto device = m_policy->parameters().front().device();
    m_winners = winners.to(device, torch::kLong);
    m_losers = losers.to(device, torch::kLong);
}

std::string optimizerStatePath(const std::string& checkpointPath)
{
    return std::filesystem::path(checkpointPath).replace_extension(".adam").string();
}

bool DpoTrainer::isAdapted() const { return dynamic_cast<const LoraDenoiser*>(m_policy.get()) != nullptr; }

void DpoTrainer::saveOptimizerState(const std::string& checkpointPath)
{
    if (!m_optimizer || isAdapted()) // see the constructor: a resumed run's adapters start afresh
        return;
    std::ostringstream bytes;
    torch::serialize::OutputArchive archive;
    m_optimizer->save(archive);
    archive.save_to(bytes);
    if (Status s = AtomicFile::write(optimizerStatePath(checkpointPath), bytes.str()); !s)
        throw std::runtime_error("the optimizer state: " + s.error());
}

std::string DpoTrainer::saveCheckpoint(int64_t step, const std::string& metricsJson, std::string& error,
                                       const std::string& fileName)
{
    if (m_checkpointFolder.empty())
        return {};
    CheckpointInfo info;
    info.id = newCheckpointId();
    info.parentId = m_parentId;
    info.kind = "d2dpo";
    info.spec = m_spec;
    info.trainingJson = toJson(m_config, m_schedule);
    info.metricsJson = metricsJson;
    info.step = step;
    info.createdAt = utcNow();
    char name[32];
    std::snprintf(name, sizeof name, "step-%06lld.d2dpo", static_cast<long long>(step));
    const std::string path = (std::filesystem::path(m_checkpointFolder) / (fileName.empty() ? name : fileName)).string();
    // The optimizer state first: a checkpoint on disk always has the state `--resume` needs.
    std::error_code ec;
    std::filesystem::create_directories(m_checkpointFolder, ec);
    try {
        saveOptimizerState(path);
    } catch (const std::exception& e) {
        error = userMessage(e);
        return {};
    }
    if (Status s = d2dpo::saveCheckpoint(path, m_policy, info); !s) {
        error = s.error();
        return {};
    }
    return path;
}

DpoTrainer::StepTensors DpoTrainer::step(bool withRewards)
{
    if (!m_setupError.empty())
        throw std::runtime_error(m_setupError);
    const auto device = m_policy->parameters().front().device();
    if (!m_optimizer) {
        // A resumed run draws other batches than the first attempt did after the same step.
        m_generator = makeGenerator(m_seed + uint64_t(m_startStep) * 1000003u, device);
        m_optimizer = std::make_unique<FusedAdam>(m_policy->parameters(),
                                                           torch::optim::AdamOptions(m_config.learningRate));
        if (!m_optimizerStateToLoad.empty()) {
            torch::serialize::InputArchive archive;
            archive.load_from(m_optimizerStateToLoad, device);
            m_optimizer->load(archive);
        }
        m_policy->train();
    }
    const auto index = torch::randint(0, m_winners.size(0), {m_config.batch}, *m_generator,
                                      torch::dtype(torch::kLong).device(device));
    dropGradients(m_policy);
    const DpoTerms terms = d2dpoBackward(m_policy, m_reference, m_noise, m_winners.index_select(0, index),
                                         m_losers.index_select(0, index), m_config, *m_generator,
                                         m_config.batchPiece);
    StepTensors out{terms.loss, {}};
    if (device.is_cpu() && !std::isfinite(terms.loss.item<double>()))
        return out;
    m_optimizer->step();
    if (withRewards)
        out.rewards = rewardFigures(terms, m_config.beta);
    return out;
}

DpoTrainer::StepOutcome DpoTrainer::trainStep(bool withRewards)
{
    const StepTensors tensors = step(withRewards);
    StepOutcome outcome;
    outcome.loss = tensors.loss.item<double>();
    if (tensors.rewards.defined())
        outcome.rewards = rewardStatsFrom(tensors.rewards);
    return outcome;
}

int DpoTrainer::hostReadEvery() const
{
    if (m_schedule.hostReadEvery > 0)
        return m_schedule.hostReadEvery;
    return m_policy->parameters().front().device().is_cpu() ? 1 : kGpuHostReadEvery;
}

FinishedEvent DpoTrainer::run(TrainListener& listener, const StopToken& stop)
{
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
    FinishedEvent finished;
    finished.stepsDone = m_startStep;
    finished.lastCheckpointPath = m_resumedCheckpoint;
    std::string lastMetrics = "{}";

    auto measure = [&](Denoiser& model) {
        auto generator = makeGenerator(m_evalSeed, m_policy->parameters().front().device());
        SampleMetrics metrics =
            evaluateModel(model, m_task, m_spec.noise, m_sampling, m_schedule.evalSamples, generator, &stop,
                          [&listener](double drawn, int64_t total) { listener.onEvaluationProgress(drawn, total); });
        metrics.seed = m_evalSeed;
        return metrics;
    };
    std::optional<BestCheckpoint> best;
    auto evaluate = [&](int64_t step) {
        // Said before, not only after: an evaluation of a large model takes a while (the views show it).
        listener.onLog("evaluating step " + std::to_string(step) + " on " + std::to_string(m_schedule.evalSamples) +
                       " samples");
        const SampleMetrics metrics = measure(m_policy);
        lastMetrics = metrics.toJson();
        listener.onEvaluation({step, metrics});
        if (best && best->offer(step, metrics)) {
            std::string error;
            finished.bestCheckpointPath = saveCheckpoint(step, lastMetrics, error, "best.d2dpo");
            if (!error.empty())
                throw std::runtime_error("the best checkpoint: " + error);
        }
    };
    int64_t lastCheckpointStep = m_startStep;
    auto checkpoint = [&](int64_t step) {
        lastCheckpointStep = step;
        std::string error;
        const std::string path = saveCheckpoint(step, lastMetrics, error);
        if (!error.empty())
            throw std::runtime_error(error);
        if (!path.empty()) {
            finished.lastCheckpointPath = path;
            listener.onCheckpoint({step, path});
        }
    };

    try {
        if (!m_setupError.empty())
            throw std::runtime_error(m_setupError);
        if (!m_winners.defined() || m_winners.size(0) == 0)
            throw std::runtime_error("no preference pairs to train on");
        if (const auto* adapted = dynamic_cast<const LoraDenoiser*>(m_policy.get()))
            listener.onLog("low-rank adapters of rank " + std::to_string(adapted->rank()) + " on " +
                           std::to_string(adapted->targets().size()) + " weight matrices: " +
                           std::to_string(adapted->trainedCount()) + " numbers trained, the model's own frozen");
        if (!m_schedule.keepBest.empty() && !m_checkpointFolder.empty()) {
            if (!m_referenceVsr) {
                m_reference->eval();
                m_referenceVsr = measure(m_reference).vsr();
            }
            best.emplace(m_schedule.keepBest, m_schedule.keepBestVsrSlack, *m_referenceVsr);
            // A resumed run's earlier best stays the one to beat.
            const std::string earlier = (std::filesystem::path(m_checkpointFolder) / "best.d2dpo").string();
            std::error_code ec;
            if (m_startStep > 0 && std::filesystem::exists(earlier, ec))
                if (auto kept = loadCheckpoint(earlier, torch::kCPU))
                    if (auto metrics = sampleMetricsFromJson(kept->info.metricsJson))
                        if (best->offer(kept->info.step, metrics.value()))
                            finished.bestCheckpointPath = earlier;
        }
        if (m_winners.sizes() != m_losers.sizes() || m_winners.size(1) != m_task.length())
            throw std::runtime_error("preference pairs do not match the task's sequence length");
        // Steps run ahead of the host by up to hostReadEvery(): their losses (and rewards) wait
        // on the device and are read in one transfer, then reported in order. The first
        // non-finite loss ends the run at its step.
        struct Unread {
            int64_t step;
            StepTensors figures;
            bool report;
        };
        std::vector<Unread> unread;
        const size_t readEvery = size_t(hostReadEvery());
        auto readBack = [&]() -> bool {
            if (unread.empty())
                return true;
            // One transfer: every loss, then the reward figures [4] of the steps that have them.
            std::vector<torch::Tensor> parts;
            for (const Unread& u : unread)
                parts.push_back(u.figures.loss.reshape({1}).to(torch::kFloat));
            for (const Unread& u : unread)
                if (u.figures.rewards.defined())
                    parts.push_back(u.figures.rewards.to(torch::kFloat));
            const auto host = torch::cat(parts).to(torch::kCPU, torch::kDouble).contiguous();
            const double* loss = host.data_ptr<double>();
            const double* rewardFigures = loss + unread.size();
            for (size_t i = 0; i < unread.size(); ++i) {
                const Unread& u = unread[i];
                if (!std::isfinite(loss[i])) {
                    finished.status = RunStatus::Failed;
                    const bool applied = !u.figures.loss.is_cpu(); // on a GPU the update went ahead
                    std::string kept = finished.stepsDone == m_startStep && m_startStep == 0
                                           ? "no step completed, so the model was not changed"
                                           : "the weights of step " + std::to_string(finished.stepsDone) + " are kept";
                    if (applied)
                        kept = "the update was applied on the device, so only a checkpoint written before step " +
                               std::to_string(u.step) + " holds good weights";
                    finished.error = "D2-DPO loss became non-finite (" + std::to_string(loss[i]) + ") at step " +
                                     std::to_string(u.step) + "; " + kept +
                                     ". Try a lower learning rate or beta";
                    unread.clear();
                    return false;
                }
                finished.stepsDone = u.step;
                std::optional<RewardStats> rewards;
                if (u.figures.rewards.defined()) {
                    rewards = RewardStats{rewardFigures[0], rewardFigures[1], rewardFigures[2], rewardFigures[3]};
                    rewardFigures += 4;
                }
                if (u.report) {
                    const double seconds = elapsed();
                    listener.onProgress(
                        {u.step, m_config.steps, loss[i], rewards, double(u.step - m_startStep) / seconds, seconds});
                }
            }
            unread.clear();
            return true;
        };
        for (int64_t step = m_startStep + 1; step <= m_config.steps; ++step) {
            if (stop.stopRequested()) {
                if (readBack())
                    finished.status = RunStatus::Stopped;
                break;
            }
            const bool report = step % std::max(1, m_schedule.logEvery) == 0 || step == m_config.steps;
            try {
                // Heard inside a step too, between its pieces and before its backward pass: a
                // step of a large model takes seconds. The weights stay the last whole step's.
                const PassWatch hearStop([&] {
                    if (stop.stopRequested())
                        throw StepStopped();
                });
                unread.push_back({step, this->step(report), report});
            } catch (const StepStopped&) {
                if (readBack())
                    finished.status = RunStatus::Stopped;
                break;
            }
            const bool evaluationDue =
                m_schedule.evalEvery > 0 && step % m_schedule.evalEvery == 0 && step != m_config.steps;
            const bool checkpointDue =
                m_schedule.checkpointEvery > 0 && step % m_schedule.checkpointEvery == 0 && step != m_config.steps;
            if ((unread.size() >= readEvery || step == m_config.steps || evaluationDue || checkpointDue) && !readBack())
                break;
            if (evaluationDue) {
                try {
                    evaluate(step);
                } catch (const EvaluationStopped&) { // a stop is heard inside a long evaluation too
                    finished.status = RunStatus::Stopped;
                    lastMetrics = "{}";
                    break;
                }
            }
            if (checkpointDue)
                checkpoint(step);
        }
        m_policy->eval();
        if (finished.status == RunStatus::Completed) {
            try {
                evaluate(finished.stepsDone);
            } catch (const EvaluationStopped&) { // every step done, the last one not measured
                finished.status = RunStatus::Stopped;
                lastMetrics = "{}";
            }
        }
        // A non-finite loss leaves the weights of the last step untouched, so they are still
        // good unless the previous update itself produced non-finite weights: then the last
        // interval checkpoint stays the last good one.
        // (not again when the last interval checkpoint already holds these weights)
        // The best first, the last weights after it: the run's result is its last checkpoint.
        if (best) {
            finished.bestDescription = best->describe();
            listener.onLog("best checkpoint by " + m_schedule.keepBest + ": " + finished.bestDescription);
            if (!finished.bestCheckpointPath.empty())
                listener.onCheckpoint({*best->bestStep(), finished.bestCheckpointPath});
        }
        if (finished.stepsDone > lastCheckpointStep && allFinite(m_policy))
            checkpoint(finished.stepsDone);
    } catch (const std::exception& e) {
        finished.status = RunStatus::Failed;
        finished.error = "D2-DPO training failed: " + userMessage(e);
    }
    m_policy->eval();
    finished.elapsedSeconds = elapsed();
    listener.onFinished(finished);
    return finished;
}

} // namespace d2dpo
