// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/dpojob.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "base/failurereport.h"
#include "base/metricnames.h"
#include "base/cputhreads.h"
#include "base/runlock.h"
#include "base/safeoutput.h"
#include "jobs/checkpointrecord.h"
#include "jobs/dporesume.h"
#include "jobs/runrecorder.h"
#include "jobs/openmodel.h"
#include "jobs/runpolicy.h"
#include "model/device.h"
#include "train/dpotrainer.h"
#include "train/evaluation.h"
#include "diffusion/noiseprocess.h"
#include "diffusion/sampler.h"
#include "store/preferencestore.h"
#include "tasks/task.h"

namespace d2dpo {

namespace {

using json = nlohmann::json;

/// The store's decisive labels of the task's sequences as (winners, losers) [P, D] int64, read
/// with the task; labels of other tasks are left out and counted in the log.
Result<std::pair<torch::Tensor, torch::Tensor>> storePreferences(PreferenceStore& store, const Task& task,
                                                                 const std::vector<std::string>& labelers,
                                                                 TrainListener& listener)
{
    const int64_t length = task.length();
    auto records = store.preferences();
    if (!records)
        return makeError(records.error());
    const UsablePairs pairs = countUsablePairs(records.value(), task.key(), labelers);
    if (pairs.otherTask > 0)
        listener.onLog(std::to_string(pairs.otherTask) + " labelled pairs of other tasks than the reference's (" +
                       task.key() + ") are left out");
    if (pairs.otherLabelers > 0)
        listener.onLog(std::to_string(pairs.otherLabelers) + " labelled pairs by labelers not chosen are left out");
    std::vector<int64_t> winners, losers;
    for (const PreferenceRecord& r : records.value()) {
        if (r.task != task.key() ||
            (!labelers.empty() && std::find(labelers.begin(), labelers.end(), r.labeler) == labelers.end()))
            continue;
        for (const auto& [text, into] : {std::pair{&r.chosen, &winners}, std::pair{&r.rejected, &losers}}) {
            auto tokens = task.parse(*text);
            if (!tokens)
                return makeError("a stored preference cannot be read: " + tokens.error());
            into->insert(into->end(), tokens->begin(), tokens->end());
        }
    }
    if (winners.empty())
        return makeError("the store has no decisive labels (left/right) of this task (" + task.key() + ")" +
                         (labelers.empty() ? std::string() : std::string(" by the chosen labelers")) +
                         " to train on; label some pairs first");
    const int64_t count = int64_t(winners.size()) / length;
    return std::pair{torch::tensor(winners).view({count, length}), torch::tensor(losers).view({count, length})};
}

FinishedEvent failedBeforeTraining(const std::string& error)
{
    FinishedEvent finished;
    finished.status = RunStatus::Failed;
    finished.error = error;
    return finished;
}

} // namespace

/// The reference's metrics under the run's sampler, sample count and seed: from the store when
/// they were measured before (so every run and view shows the same figures), else measured now
/// and recorded there. `example` is one sequence of the task, to name the metrics' descriptions.
SampleMetrics referenceMetrics(PreferenceStore* store, const CheckpointInfo& reference, Denoiser frozen,
                               const Task& task, const DpoJobSpec& spec, uint64_t seed, const torch::Tensor& example,
                               TrainListener& listener)
{
    const std::string sampler = describeSampling(reference.spec.noise, spec.sampling, task.length());
    const int64_t samples = spec.dpo.evalSamples;
    // Everything that changes the draws or what is measured: the sampler, eta, the batching (the
    // generator's draws go batch by batch), the device, and the rule whose share is measured.
    char eta[32];
    std::snprintf(eta, sizeof eta, "%.17g", reference.spec.noise.eta);
    const std::string key = sampler + "; eta " + eta + "; batch " + std::to_string(spec.sampling.batch) + "; " +
                            frozen->parameters().front().device().str() + "; rule " +
                            (task.rule() ? task.rule()->spec() : std::string("none"));
    if (store) {
        auto known = store->evaluation(reference.id, key, samples, seed);
        if (known && known.value())
            if (auto parsed = sampleMetricsFromJson(*known.value())) {
                SampleMetrics metrics = parsed.value();
                const SampleMetrics described = task.measure(example.to(torch::kCPU));
                for (MetricValue& value : metrics.values)
                    for (const MetricValue& d : described.values)
                        if (d.name == value.name)
                            value.description = d.description;
                listener.onLog("the reference's metrics as measured before (" + metrics.provenance() + ")");
                return metrics;
            }
    }
    listener.onLog("measuring the reference on " + std::to_string(samples) + " samples");
    torch::NoGradGuard noGrad;
    auto generator = makeGenerator(seed, frozen->parameters().front().device());
    SampleMetrics metrics = evaluateModel(frozen, task, reference.spec.noise, spec.sampling, samples, generator);
    metrics.seed = seed; // the policy's evaluations draw with the same seed
    if (store)
        if (Status s = store->saveEvaluation(reference.id, key, samples, seed, metrics.toJson()); !s)
            listener.onLog("the reference's metrics were not recorded in the store: " + s.error());
    return metrics;
}

std::string preferenceSourceJson(PreferenceSource source, int64_t pairs, const std::string& rule)
{
    return json{{"source", source == PreferenceSource::StoreLabels ? "store-labels" : "rule:" + rule}, {"pairs", pairs}}
        .dump();
}

DpoJobOutcome runDpoJob(const DpoJobSpec& given, TrainListener& listener, const StopToken& stop)
{
    DpoJobOutcome outcome;
    std::unique_ptr<PreferenceStore> store;
    RunLock lock;
    auto finishWith = [&](FinishedEvent finished) {
        if (store && outcome.runId > 0) {
            if (Status s = store->finishRun(outcome.runId, toString(finished.status), finished.error,
                                            outcome.resultModelId);
                !s)
                listener.onLog("warning: " + s.error());
        }
        lock.release(); // after the status is written: a live lock always means a live run
        outcome.finished = std::move(finished);
        listener.onFinished(outcome.finished);
        return outcome;
    };

    try {
        // Paths are kept absolute: the store outlives the working folder the run was started in.
        DpoJobSpec spec = given;
        std::error_code ec;
        for (std::string* path : {&spec.referencePath, &spec.storePath, &spec.outputFolder})
            if (!path->empty())
                *path = std::filesystem::absolute(*path, ec).lexically_normal().string();
        const bool resuming = spec.resumeRunId > 0;
        if (Status s = validate(spec.dpo); !s)
            return finishWith(failedBeforeTraining(s.error()));
        if (Status s = validate(spec.sampling); !s)
            return finishWith(failedBeforeTraining(s.error()));
        if (spec.source == PreferenceSource::RulePairs && spec.rulePairs < 1)
            return finishWith(failedBeforeTraining("the number of rule-made pairs must be at least 1"));
        if ((spec.source == PreferenceSource::StoreLabels || resuming) && spec.storePath.empty())
            return finishWith(failedBeforeTraining("training on the experts' labels, or resuming a run, needs a "
                                                   "preference store"));
        if (spec.outputFolder.empty())
            return finishWith(failedBeforeTraining("no folder was given for the checkpoints"));
        // Each run writes into its own new folder: never over an earlier run's checkpoints.
        if (!resuming)
            if (Status s = checkOutputFolder(spec.outputFolder, {spec.referencePath, spec.storePath},
                                             "the checkpoint folder");
                !s)
                return finishWith(failedBeforeTraining(s.error()));

        // Thread counts are per calling thread under OpenMP: set them where the job runs (which
        // also keeps the 150 ms look at the machine's load out of a GUI thread).
        if (Status s = configureThreads(spec.threads > 0 ? spec.threads : defaultThreadCount(spec.reservedCores)); !s)
            return finishWith(failedBeforeTraining(s.error()));
        auto device = resolveDevice(spec.device);
        if (!device)
            return finishWith(failedBeforeTraining(device.error()));
        listener.onLog(describeRuntime(device.value()));
        auto opened = openModel(spec.referencePath, device.value(), spec.rule);
        if (!opened)
            return finishWith(failedBeforeTraining(opened.error()));
        LoadedCheckpoint* loaded = &opened->checkpoint;
        CheckpointInfo reference = loaded->info;
        if (spec.eta) {
            reference.spec.noise.eta = *spec.eta;
            if (Status s = validate(reference.spec.noise); !s)
                return finishWith(failedBeforeTraining(s.error()));
            auto noise = makeNoiseProcess(reference.spec.noise, opened->task->vocabSize());
            if (!noise)
                return finishWith(failedBeforeTraining(noise.error()));
            opened->noise = std::move(noise.value());
        }
        const Task& task = *opened->task;
        const NoiseProcess& noise = *opened->noise;
        listener.onLog("reference " + reference.id + " (" + reference.kind + ", step " +
                       std::to_string(reference.step) + ") from " + spec.referencePath);

        if (!spec.storePath.empty()) {
            auto opened = PreferenceStore::open(spec.storePath, spec.source == PreferenceSource::StoreLabels || resuming
                                                                    ? PreferenceStore::OpenMode::MustExist
                                                                    : PreferenceStore::OpenMode::CreateIfMissing);
            if (!opened)
                return finishWith(failedBeforeTraining(opened.error()));
            store = std::move(opened.value());
        }

        torch::Tensor winners, losers;
        if (spec.source == PreferenceSource::StoreLabels) {
            auto prefs = storePreferences(*store, task, spec.labelers, listener);
            if (!prefs)
                return finishWith(failedBeforeTraining(prefs.error()));
            std::tie(winners, losers) = prefs.value();
            listener.onLog(std::to_string(winners.size(0)) + " labelled pairs from the store (ties and skips left out)");
        } else {
            auto pairGenerator = makeGenerator(spec.seed + 2000, device.value());
            auto pairs = task.rulePairs(spec.rulePairs, pairGenerator, device.value());
            if (!pairs)
                return finishWith(failedBeforeTraining(pairs.error()));
            std::tie(winners, losers) = pairs.value();
            listener.onLog(std::to_string(spec.rulePairs) + " rule-made pairs (" + task.rule()->describe() + ")");
        }
        outcome.pairs = winners.size(0);

        // The folder and its lock come before the run's record: a "running" run always has a lock.
        if (resuming && !std::filesystem::is_directory(spec.outputFolder, ec))
            return finishWith(failedBeforeTraining("the run's checkpoint folder " + spec.outputFolder +
                                                   " no longer exists; it cannot be resumed"));
        std::filesystem::create_directories(spec.outputFolder, ec);
        if (ec)
            return finishWith(failedBeforeTraining("cannot create the checkpoint folder " + spec.outputFolder + ": " +
                                                   ec.message()));
        {
            // Taken with or without a store: two runs never share a folder.
            auto acquired = RunLock::acquire((std::filesystem::path(spec.outputFolder) / "run.lock").string());
            if (!acquired)
                return finishWith(failedBeforeTraining(acquired.error()));
            lock = std::move(acquired.value());
            // Checked again under the lock: another run may have started in the folder meanwhile.
            if (!resuming)
                for (const auto& entry : std::filesystem::directory_iterator(spec.outputFolder, ec))
                    if (entry.path().filename() != "run.lock")
                        return finishWith(failedBeforeTraining("the checkpoint folder " + spec.outputFolder +
                                                               " was taken by another run; choose a new folder"));
        }

        // Resuming: the run's newest recorded checkpoint holds the policy, its ".adam" file Adam's state.
        std::optional<ResumePoint> resumePoint;
        Denoiser resumedPolicy{nullptr};
        if (resuming) {
            auto point = findResumePoint(*store, spec.resumeRunId);
            if (!point)
                return finishWith(failedBeforeTraining(point.error()));
            resumePoint = point.value();
            // Everything is checked before the run is reopened: a resume refused here leaves the run
            // stopped or interrupted, ready for another try.
            if (!resumePoint->checkpointPath.empty()) {
                auto policy = loadCheckpoint(resumePoint->checkpointPath, device.value());
                if (!policy)
                    return finishWith(failedBeforeTraining(policy.error()));
                if (policy->info.parentId != reference.id)
                    return finishWith(failedBeforeTraining("the run's checkpoint " + resumePoint->checkpointPath +
                                                           " was not trained from the reference " + reference.id +
                                                           " (was the reference file replaced?)"));
                resumedPolicy = policy->model;
            }
            if (Status s = store->reopenRun(spec.resumeRunId, lock.path(), resumePoint->step); !s)
                return finishWith(failedBeforeTraining(s.error()));
            outcome.runId = spec.resumeRunId;
            outcome.resultModelId = resumePoint->modelId;
            listener.onLog("resuming run " + std::to_string(outcome.runId) + " at step " +
                           std::to_string(resumePoint->step) + " of " + std::to_string(spec.dpo.steps) +
                           (resumePoint->checkpointPath.empty() ? " (no checkpoint was written: from the reference)"
                                                                : " from " + resumePoint->checkpointPath));
        } else if (store) {
            auto known = store->model(reference.id);
            if (!known)
                return finishWith(failedBeforeTraining(known.error()));
            if (!known->has_value()) {
                if (Status s = store->addModel(modelRecordFor(loaded->info, spec.referencePath, "reference")); !s)
                    return finishWith(failedBeforeTraining(s.error()));
            }
            RunRecord run;
            run.kind = "d2dpo";
            run.referenceModelId = reference.id;
            run.configJson = json{{"dpo", json::parse(toJson(spec.dpo))},
                                  {"sampling", json::parse(toJson(spec.sampling))},
                                  {"preferences", json::parse(preferenceSourceJson(spec.source, outcome.pairs, task.rule() ? task.rule()->spec() : ""))},
                                  {"rule_pairs", spec.rulePairs},
                                  {"rule", spec.rule},
                                  {"labelers", spec.labelers},
                                  {"seed", spec.seed},
                                  {"eta", reference.spec.noise.eta},
                                  {"device", spec.device},
                                  {"reference_path", spec.referencePath},
                                  {"output_folder", spec.outputFolder}}
                                 .dump();
            run.device = device->str();
            run.lockPath = lock.path();
            auto runId = store->startRun(run);
            if (!runId)
                return finishWith(failedBeforeTraining(runId.error()));
            outcome.runId = runId.value();
            listener.onLog("run " + std::to_string(outcome.runId) + " recorded in " + spec.storePath);
        }

        RunRecorder recorder(listener, store.get(), outcome.runId);
        DpoTrainer trainer(loaded->model, task, noise, reference.spec, spec.dpo, spec.sampling,
                           spec.seed);
        if (resumedPolicy) {
            // Into the policy only: the trainer has already frozen its copy of the run's reference.
            torch::NoGradGuard noGrad;
            auto into = trainer.policy()->parameters();
            auto from = resumedPolicy->parameters();
            for (size_t k = 0; k < into.size(); ++k)
                into[k].copy_(from[k]);
        }
        trainer.setPreferences(winners, losers);
        trainer.setCheckpointing(spec.outputFolder, reference.id);
        if (resumePoint)
            trainer.resumeFrom(resumePoint->step, resumePoint->checkpointPath, resumePoint->optimizerState);
        const uint64_t evaluationSeed = spec.seed + 1;
        trainer.setEvaluationSeed(evaluationSeed);
        if (spec.evaluateReference && !resuming && !stop.stopRequested()) {
            const SampleMetrics metrics =
                referenceMetrics(store.get(), reference, trainer.reference(), task, spec, evaluationSeed,
                                 winners.slice(0, 0, 1), listener);
            recorder.onEvaluation({0, metrics, true});
            trainer.setReferenceVsr(metrics.vsr());
        }
        trainer.run(recorder, stop);
        FinishedEvent finished = recorder.finished().value_or(failedBeforeTraining("the trainer did not finish"));
        if (!recorder.lastModelId().empty())
            outcome.resultModelId = recorder.lastModelId();
        return finishWith(std::move(finished));
    } catch (const std::exception& e) {
        return finishWith(failedBeforeTraining("D2-DPO training failed: " + userMessage(e)));
    }
}

} // namespace d2dpo
