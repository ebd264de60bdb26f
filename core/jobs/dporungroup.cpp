// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/dporungroup.h"

#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

#include "distributed/traininggroup.h"
#include "jobs/runsetupshare.h"

namespace d2dpo {

namespace {

/// How long the other ranks wait for rank 0's setup: it may read a large store and measure the
/// reference with thousands of samples, which the collectives' timeout is not sized for.
constexpr std::chrono::seconds kSetupWait{24 * 3600};

/// What every rank must be started with alike for the ranks' shares to add up to one batch:
/// the training settings, the seed of the draws, the noise's eta and the pairs' source (the weights
/// themselves come from rank 0).
std::string settingsFingerprint(const DpoJobSpec& spec)
{
    return nlohmann::json{{"training", toJson(spec.dpo, spec.schedule)},
                          {"sampling", toJson(spec.sampling)},
                          {"seed", spec.seed},
                          {"eta", spec.eta ? nlohmann::json(*spec.eta) : nlohmann::json(nullptr)},
                          {"source", int(spec.source)},
                          {"rule_pairs", spec.rulePairs},
                          {"rule", spec.rule}}
        .dump();
}

} // namespace

DpoRunGroup::DpoRunGroup(const std::optional<LaunchEnvironment>& launch)
    : m_launch(launch && launch->worldSize > 1 ? launch : std::nullopt)
{
}

Status DpoRunGroup::join(const DpoJobSpec& spec, TrainListener& listener)
{
    if (!m_launch)
        return Ok{};
    if (spec.groupTimeoutSeconds < 1)
        return makeError("the group's timeout must be at least 1 second");
    if (spec.grouped)
        return makeError("grouped scoring runs in one process: leave out the multi-process launch");
    if (spec.dpo.batch % m_launch->worldSize != 0) // said before anything is recorded
        return makeError("the batch of " + std::to_string(spec.dpo.batch) + " pairs cannot be shared evenly by " +
                         std::to_string(m_launch->worldSize) + " processes: choose a batch that " +
                         std::to_string(m_launch->worldSize) + " divides");
    m_timeoutSeconds = spec.groupTimeoutSeconds;
    listener.onLog("joining the run's processes: " + describeLaunch(*m_launch));
    auto group = TrainingGroup::join(*m_launch, std::chrono::seconds(m_timeoutSeconds));
    if (!group)
        return makeError(group.error());
    m_group = group.value();
    listener.onLog(std::to_string(m_group->size()) + " processes joined (Gloo over TCP); rank " +
                   std::to_string(m_group->rank()) + (m_group->isMain() ? " records and writes" : " writes nothing"));
    return Ok{};
}

std::string DpoRunGroup::tellFailure(const std::string& error, torch::Device device)
{
    if (!m_group || !m_group->isMain() || m_setupShared)
        return error;
    m_setupShared = true;
    try {
        SharedRunSetup setup;
        setup.error = error;
        TrainingPairs none;
        shareRunSetup(*m_group, setup, none, device, std::chrono::seconds(m_timeoutSeconds));
    } catch (const std::exception&) { // the others are gone already
    }
    return error;
}

Status DpoRunGroup::shareSetup(DpoJobSpec& spec, std::optional<DpoResumePoint>& resume, TrainingPairs& pairs,
                               torch::Device device, DpoTrainerOptions& options)
{
    if (!m_group)
        return Ok{};
    SharedRunSetup setup;
    if (m_group->isMain()) {
        setup.settingsJson = settingsFingerprint(spec);
        setup.startStep = resume ? resume->step : 0;
        setup.evalSamples = spec.schedule.evalSamples;
        setup.referenceVsr = options.referenceVsr();
    }
    shareRunSetup(*m_group, setup, pairs, device, std::max(std::chrono::seconds(m_timeoutSeconds), kSetupWait));
    m_setupShared = true;
    options.group(m_group);
    if (m_group->isMain())
        return Ok{};
    if (!setup.error.empty())
        return makeError("rank 0 could not start the run: " + setup.error);
    spec.schedule.evalSamples = setup.evalSamples;
    if (setup.settingsJson != settingsFingerprint(spec))
        return makeError("rank " + std::to_string(m_group->rank()) + " was started with other training settings "
                         "or seed than rank 0: start every rank with the same command line");
    if (setup.startStep > 0)
        resume = DpoResumePoint{setup.startStep, "", ""};
    options.resume(resume).referenceVsr(setup.referenceVsr).schedule(spec.schedule).checkpointFolder("");
    return Ok{};
}

} // namespace d2dpo
