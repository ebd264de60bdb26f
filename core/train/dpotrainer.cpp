// SPDX-License-Identifier: GPL-3.0-or-later
#include "train/dpotrainer.h"

#include <cmath>
#include <filesystem>
#include <sstream>

#include <torch/torch.h>

#include "base/failurereport.h"
#include "base/safeoutput.h"
#include "io/checkpoint.h"
#include "base/untrustedtext.h"
#include "kernels/matmulprecision.h"
#include "model/archivegate.h"
#include "model/device.h"
#include "model/loradenoiser.h"
#include "model/slotteddenoiser.h"
#include "diffusion/dpoestimator.h"
#include "distributed/traininggroup.h"
#include "train/groupstep.h"

namespace d2dpo {

namespace {

/// The policy a run trains: `start` itself, or with DpoConfig::loraRank adapters on it (the
/// reference then shares its weights). Where adapters cannot be made, `error` says why.
Denoiser policyOf(Denoiser start, const DpoConfig& config, uint64_t seed, std::string& error)
{
    if (config.loraRank <= 0)
        return start;
    auto scripted = std::dynamic_pointer_cast<SlottedDenoiser>(start);
    if (!scripted) {
        error = "low-rank adapters are for models brought in (TorchScript or published weights); train this model's "
                "own weights (--lora-rank 0)";
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
    , m_group(options.group())
{
    if (m_group && m_group->size() > 1 && m_config.batch % m_group->size() != 0)
        m_setupError = "the batch of " + std::to_string(m_config.batch) + " pairs cannot be shared evenly by " +
                       std::to_string(m_group->size()) + " processes: choose a batch that " +
                       std::to_string(m_group->size()) + " divides";

    if (const auto& resume = options.resume()) {
        m_startStep = resume->step;
        m_resumedCheckpoint = resume->checkpointPath;
        // A resumed run's adapters are recovered from the merged weights its checkpoint holds (a
        // rank-r SVD, jobs/dpojob.cpp): another factorisation of the same B A, so Adam's moments of
        // the earlier A and B would not fit them, and Adam starts afresh.
        if (!isAdapted())
            m_optimizerStateToLoad = resume->optimizerState;
    }
    if (m_setupError.empty())
        if (std::string why = precisionUnsupportedReason(m_config.precision, m_policy->parameters().front().device());
            !why.empty())
            m_setupError = "--precision " + std::string(precisionName(m_config.precision)) + ": " + why;
}

void DpoTrainer::setPreferenceGroups(const PairGroups& groups)
{
    TORCH_CHECK(m_winners.defined() && groups.winners.size(0) == m_winners.size(0),
                "grouped scoring needs the same pairs as setPreferences()");
    const auto device = m_policy->parameters().front().device();
    m_groups = PairGroups{groups.members.to(device), groups.memberGroup.to(device), groups.unionMask.to(device),
                          groups.templates.to(device), groups.winners.to(device), groups.losers.to(device)};
}

void DpoTrainer::setPreferences(const torch::Tensor& winners, const torch::Tensor& losers, const torch::Tensor& weights)
{
    const auto device = m_policy->parameters().front().device();
    m_winners = winners.to(device, torch::kLong);
    m_losers = losers.to(device, torch::kLong);
    m_pairWeights = weights.defined() ? weights.to(device, torch::kFloat) : torch::Tensor();
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
            // Adam's state is LibTorch's serialize archive, a TorchScript archive: a file beside a
            // checkpoint someone shared passes the same gate as a format-1 checkpoint (no function).
            auto bytes = readBoundedRegularFile(m_optimizerStateToLoad, uint64_t(1) << 40);
            if (!bytes)
                throw std::runtime_error("Adam's state '" + m_optimizerStateToLoad + "': " + bytes.error());
            if (Status s = checkArchiveBeforeLoading(bytes.value(), ArchiveCode::None); !s)
                throw std::runtime_error("Adam's state '" + m_optimizerStateToLoad + "' is refused: " + s.error());
            torch::serialize::InputArchive archive;
            archive.load_from(bytes.value().data(), bytes.value().size(), device);
            m_optimizer->load(archive);
            if (const std::string wrong = m_optimizer->stateMismatch(); !wrong.empty())
                throw std::runtime_error("Adam's state '" + m_optimizerStateToLoad + "' does not fit this model (" +
                                         wrong + "): it belongs to another model; resume without it to start "
                                         "Adam afresh");
        }
        if (m_group) // rank 0's weights and Adam state on every rank
            shareStartingPoint(*m_group, m_policy, m_reference, *m_optimizer);
        m_policy->train();
    }
    const auto index = m_pairWeights.defined()
                           ? torch::multinomial(m_pairWeights, m_config.batch, /*replacement=*/true, *m_generator)
                           : torch::randint(0, m_winners.size(0), {m_config.batch}, *m_generator,
                                            torch::dtype(torch::kLong).device(device));
    dropGradients(m_policy);
    // The products of both models' forward and backward passes; Adam's step below is float32 alone.
    const MatmulPrecisionScope precision(m_config.precision);
    DpoTerms terms;
    if (m_groups && m_group) {
        throw std::runtime_error("grouped scoring runs in one process: train with --source measurements --grouped "
                                 "without a multi-process launch");
    } else if (m_groups) { // one pass per group in the batch; its terms are detached as d2dpoBackward's are
        terms = groupedD2dpoLoss(m_policy, m_reference, m_noise, *m_groups, index, m_config, *m_generator);
        terms.loss.backward();
        terms = DpoTerms{terms.loss.detach(), terms.divergenceChosen.detach(), terms.divergenceRejected.detach(), {}};
    } else {
        PairShare share; // one process: the whole batch
        if (m_group) {
            const int64_t each = m_config.batch / m_group->size();
            share = {each * m_group->rank(), each * (m_group->rank() + 1)};
        }
        terms = d2dpoBackward(m_policy, m_reference, m_noise, m_winners.index_select(0, index),
                              m_losers.index_select(0, index), m_config, *m_generator, m_config.batchPiece, share);
    }
    StepTensors out{terms.loss, withRewards ? rewardFigures(terms, m_config.beta) : torch::Tensor()};
    if (m_group) { // every rank now holds the batch's gradients and figures
        const GroupStepFigures summed = sumStepOverGroup(*m_group, m_optimizer->param_groups().front().params(),
                                                         out.loss, out.rewards, m_stop && m_stop->stopRequested());
        out = {summed.loss, summed.rewards};
        m_groupStopAsked = summed.stopAsked;
    }
    if (device.is_cpu() && !std::isfinite(out.loss.item<double>()))
        return out;
    m_optimizer->step();
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

} // namespace d2dpo
