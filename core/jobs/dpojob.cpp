// SPDX-License-Identifier: GPL-3.0-or-later
#include "diffusion/groupedestimator.h"
#include "jobs/dpojob.h"

#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "base/cputhreads.h"
#include "base/failurereport.h"
#include "base/measurement.h"
#include "base/runlock.h"
#include "base/safeoutput.h"
#include "diffusion/noiseprocess.h"
#include "facades/checkpointrecord.h"
#include "facades/openmodel.h"
#include "facades/runtimeinfo.h"
#include "jobs/dporesume.h"
#include "jobs/referencemetrics.h"
#include "jobs/runending.h"
#include "jobs/runfolder.h"
#include "jobs/runrecorder.h"
#include "jobs/dporungroup.h"
#include "jobs/storewait.h"
#include "jobs/trainingpairs.h"
#include "model/device.h"
#include "model/loradenoiser.h"
#include "model/torchscriptdenoiser.h"
#include "store/preferencestore.h"
#include "store/storename.h"
#include "tasks/task.h"
#include "train/dpotrainer.h"
#include "train/evaluation.h"

namespace d2dpo {

namespace {

using json = nlohmann::json;

/// Thrown by a step that cannot go on; DpoRun::run() ends the job with it as a failed run.
struct JobRefused {
    std::string message;
};

void require(bool ok, const std::string& message)
{
    if (!ok)
        throw JobRefused{message};
}

template <typename T> T take(Result<T> result)
{
    require(result.ok(), result.ok() ? std::string() : result.error());
    return std::move(result.value());
}

void require(const Status& status) { require(status.ok(), status.ok() ? std::string() : status.error()); }

/// One D2-DPO job from start to end: the named steps below, in order, each reading and filling in
/// the run's state. Any step refuses by throwing JobRefused; finish() records how the run ended.
class DpoRun {
public:
    DpoRun(const DpoJobSpec& spec, TrainListener& listener, const StopToken& stop)
        : m_spec(spec)
        , m_listener(listener)
        , m_stop(stop)
        , m_resuming(spec.resumeRunId > 0)
        , m_group(spec.launch)
        , m_main(m_group.isMain())
    {
    }

    DpoJobOutcome run()
    {
        try {
            prepare();
            if (m_main) { // the other ranks of a data-parallel run learn all this from rank 0
                openStore();
                loadPreferences();
                takeFolder();
                if (m_resuming)
                    reopenRun();
                else
                    recordRun();
            }
            return finish(train());
        } catch (const JobRefused& refused) {
            return finish(failed(m_group.tellFailure(refused.message, m_device)));
        } catch (const std::exception& e) {
            return finish(failed(m_group.tellFailure("D2-DPO training failed: " + userMessage(e), m_device)));
        }
    }

private:
    static FinishedEvent failed(const std::string& error)
    {
        FinishedEvent finished;
        finished.status = RunStatus::Failed;
        finished.error = error;
        return finished;
    }

    /// Checks the spec, sets the threads, opens the reference on its device.
    void prepare()
    {
        // Paths are kept absolute: the store outlives the working folder the run was started in.
        std::error_code ec;
        for (std::string* path : {&m_spec.referencePath, &m_spec.storePath, &m_spec.outputFolder})
            if (!path->empty() && !isTeamStoreUrl(*path))
                *path = std::filesystem::absolute(*path, ec).lexically_normal().string();
        // The ranks of a data-parallel run meet first: a refusal on rank 0 alone (its folder taken,
        // its store missing) then reaches the others at once instead of after the group's timeout.
        require(m_group.join(m_spec, m_listener));
        require(validate(m_spec.dpo));
        require(validate(m_spec.schedule));
        require(validate(m_spec.sampling));
        require(m_spec.source != PreferenceSource::RulePairs || m_spec.rulePairs >= 1,
                "the number of rule-made pairs must be at least 1");
        require(!((m_spec.source != PreferenceSource::RulePairs || m_resuming) && m_spec.storePath.empty()),
                "training on the experts' labels or on measurements, or resuming a run, needs a preference store");
        require(std::isfinite(m_spec.labelsWeight) && std::isfinite(m_spec.measurementsWeight) &&
                    m_spec.labelsWeight > 0 && m_spec.measurementsWeight > 0,
                "each source's weight must be a positive number");
        require(!m_spec.outputFolder.empty(), "no folder was given for the checkpoints");
        // Each run writes into its own new folder: never over an earlier run's checkpoints.
        if (!m_resuming && m_main)
            require(checkOutputFolder(m_spec.outputFolder, {m_spec.referencePath, m_spec.storePath},
                                      "the checkpoint folder"));
        // Thread counts are per calling thread under OpenMP: set them where the job runs (which
        // also keeps the 150 ms look at the machine's load out of a GUI thread).
        require(configureThreads(m_spec.threads > 0 ? m_spec.threads : defaultThreadCount(m_spec.reservedCores)));
        m_device = take(resolveDevice(m_spec.device));
        if (m_group.inGroup() && m_device.is_cuda()) // each rank its GPU
            m_device = take(resolveDevice("cuda:" + std::to_string(m_group.localRank())));
        m_listener.onLog(describeRuntime(m_device));
        m_model = take(openModel(m_spec.referencePath, m_device, m_spec.rule));
        m_reference = m_model.checkpoint.info;
        if (m_spec.eta) {
            m_reference.spec.noise.eta = *m_spec.eta;
            require(validate(m_reference.spec.noise));
            m_model.noise = take(makeNoiseProcess(m_reference.spec.noise, m_model.task->vocabSize()));
        }
        m_listener.onLog("reference " + m_reference.id + " (" + m_reference.kind + ", step " +
                         std::to_string(m_reference.step) + ") from " + m_spec.referencePath);
        if (!m_resuming && m_spec.evalSeconds > 0 && m_main) // a new run's evaluations fitted to the reference's cost
            m_spec.schedule.evalSamples =
                fittedEvaluationCount(m_model.checkpoint.model, *m_model.task, m_reference.spec.noise, m_spec.sampling,
                                      {m_spec.schedule.evalSamples, m_spec.evalSeconds}, m_listener).samples;
    }

    void openStore()
    {
        if (m_spec.storePath.empty())
            return;
        const bool mustExist = m_spec.source != PreferenceSource::RulePairs || m_resuming;
        m_store = take(PreferenceStore::open(m_spec.storePath, mustExist ? PreferenceStore::OpenMode::MustExist
                                                                         : PreferenceStore::OpenMode::CreateIfMissing));
    }

    /// The pairs to train on, by source (jobs/trainingpairs.h).
    void loadPreferences()
    {
        m_pairs = take(gatherTrainingPairs(m_spec, m_store.get(), *m_model.task, m_device,
                                           [this](const std::string& line) { m_listener.onLog(line); }));
        m_outcome.pairs = m_pairs.winners.size(0);
        if (!m_spec.grouped)
            return;
        require(m_spec.source == PreferenceSource::Measurements,
                "grouped scoring scores measured pairs inside their groups: train on measurements alone "
                "(--source measurements), without labels");
        require(m_spec.dpo.vrpoSamples == 1 && m_spec.dpo.maskCoupling != "complementary" && m_spec.dpo.rpoAlpha == 0,
                "grouped scoring draws one masked context per group: VRPO samples, complementary masks and "
                "rpo_alpha are not defined for it");
        require(m_model.noise->name() == "masking", "grouped scoring is written for masking noise; this model's "
                                                    "noise is " + m_model.noise->name());
        require(m_pairs.winners.size(0) > 0, "grouped scoring needs at least one pair");
        m_groups = groupPairs(m_pairs.winners, m_pairs.losers, kGroupedMaxUnion(m_model.task->length()));
        require(m_groups.error.empty(), m_groups.error);
        m_listener.onLog("grouped scoring: " + std::to_string(m_groups.groups.unionMask.size(0)) +
                         (m_groups.groups.unionMask.size(0) == 1 ? " group of " : " groups of ") +
                         std::to_string(m_groups.groups.members.size(0)) + " sequences, union masks of at most " +
                         std::to_string(m_groups.largestUnion) + " positions; one pass per group and draw");
    }

    /// The folder and its lock come before the run's record: a "running" run always has a lock.
    /// Taken with or without a store: two runs never share a folder.
    void takeFolder()
    {
        std::error_code ec;
        require(!m_resuming || std::filesystem::is_directory(m_spec.outputFolder, ec),
                "the run's checkpoint folder " + m_spec.outputFolder + " no longer exists; it cannot be resumed");
        ec = makeRunFolder(m_spec.outputFolder, m_madeFolder);
        require(!ec, "cannot create the checkpoint folder " + m_spec.outputFolder + ": " + ec.message());
        m_lock = take(RunLock::acquire(runLockPath(m_spec.outputFolder)));
        // Checked again under the lock: another run may have started in the folder meanwhile.
        if (!m_resuming)
            for (const auto& entry : std::filesystem::directory_iterator(m_spec.outputFolder, ec))
                require(entry.path().filename() == "run.lock", "the checkpoint folder " + m_spec.outputFolder +
                                                                   " was taken by another run; choose a new folder");
    }

    /// Resuming: the run's newest recorded checkpoint holds the policy, its ".adam" file Adam's
    /// state. Everything is checked before the run is reopened: a resume refused here leaves the
    /// run stopped or interrupted, ready for another try.
    void reopenRun()
    {
        const ResumePoint point = take(findResumePoint(*m_store, m_spec.resumeRunId));
        if (!point.checkpointPath.empty()) {
            LoadedCheckpoint policy = take(loadCheckpoint(point.checkpointPath, m_device));
            require(policy.info.parentId == m_reference.id, "the run's checkpoint " + point.checkpointPath +
                                                                " was not trained from the reference " +
                                                                m_reference.id + " (was the reference file replaced?)");
            m_resumedPolicy = policy.model;
        }
        require(m_store->reopenRun(m_spec.resumeRunId, m_lock.path(), point.step));
        m_resumePoint = DpoResumePoint{point.step, point.checkpointPath, point.optimizerState};
        m_outcome.runId = m_spec.resumeRunId;
        m_outcome.resultModelId = point.modelId;
        m_listener.onLog("resuming run " + std::to_string(m_outcome.runId) + " at step " + std::to_string(point.step) +
                         " of " + std::to_string(m_spec.dpo.steps) +
                         (point.checkpointPath.empty() ? " (no checkpoint was written: from the reference)"
                                                       : " from " + point.checkpointPath));
    }

    /// A new run: the reference is a model of the store, the run a record of it with its settings.
    void recordRun()
    {
        if (!m_store)
            return;
        if (!take(m_store->model(m_reference.id)).has_value())
            require(m_store->addModel(modelRecordFor(m_model.checkpoint.info, m_spec.referencePath, "reference")));
        const Rule* rule = m_model.task->rule();
        RunRecord run;
        run.kind = RunKind::D2dpo;
        run.referenceModelId = m_reference.id;
        run.configJson =
            json{{"dpo", json::parse(toJson(m_spec.dpo, m_spec.schedule))},
                 {"sampling", json::parse(toJson(m_spec.sampling))},
                 {"preferences",
                  json::parse(trainingPairsJson(m_spec, m_pairs, rule ? rule->spec() : ""))},
                 {"rule_pairs", m_spec.rulePairs},
                 {"rule", m_spec.rule},
                 {"labelers", m_spec.labelers},
                 {"seed", m_spec.seed},
                 {"eta", m_reference.spec.noise.eta},
                 {"device", m_spec.device},
                 {"reference_path", m_spec.referencePath},
                 {"started_by", {{"user", currentUserName()}, {"host", currentHostName()},
                                 {"processes", m_spec.launch ? m_spec.launch->worldSize : 1}}},
                 {"output_folder", m_spec.outputFolder}}
                .dump();
        run.device = m_device.str();
        run.lockPath = m_lock.path();
        m_outcome.runId = take(m_store->startRun(run));
        m_listener.onLog("run " + std::to_string(m_outcome.runId) + " recorded in " +
                         storeNameForMessages(m_spec.storePath));
    }

    /// Measures the reference (the plots' baselines) on a new run, then trains.
    FinishedEvent train()
    {
        StopToken stop(&m_stop); // the caller's stop, or the store gone from under the run
        RunRecorder recorder(m_listener, m_store.get(), m_outcome.runId, stop);
        const MeasurementSpec measurement =
            MeasurementSpec::ofRun(m_spec.sampling, m_spec.schedule.evalSamples, m_spec.seed);
        auto options = DpoTrainerOptions(m_reference.spec, m_spec.dpo)
                           .schedule(m_spec.schedule)
                           .sampling(m_spec.sampling)
                           .seed(m_spec.seed)
                           .evaluationSeed(measurement.seed)
                           .checkpointFolder(m_spec.outputFolder)
                           .parentId(m_reference.id)
                           .resume(m_resumePoint);
        if (m_spec.evaluateReference && !m_resuming && !m_stop.stopRequested() && m_main) {
            // Measured on a frozen copy, as the trainer's own: the policy starts as the reference.
            // A stop during it leaves the reference unmeasured; the trainer then stops before its first step
            // (the ranks of a data-parallel run: after it, as they stop together).
            try {
                const SampleMetrics metrics =
                    referenceMetrics(m_store.get(), m_reference, frozenCopy(m_model.checkpoint.model), *m_model.task,
                                     measurement, m_pairs.winners.slice(0, 0, 1), m_listener, &stop);
                recorder.onEvaluation({0, metrics, true});
                options.referenceVsr(metrics.vsr());
            } catch (const EvaluationStopped&) {
            }
        }
        if (m_group.inGroup())
            require(m_group.shareSetup(m_spec, m_resumePoint, m_pairs, m_device, options));
        DpoTrainer trainer(m_model.checkpoint.model, *m_model.task, *m_model.noise, options);
        if (auto adapted = std::dynamic_pointer_cast<LoraDenoiser>(trainer.policy()); adapted && m_resumedPolicy) {
            // The checkpoint holds W0 + B A merged: the adapters are recovered from it (Adam starts afresh).
            if (Status s = adapted->resumeFrom(*m_resumedPolicy); !s)
                return failed("the run's checkpoint cannot continue with low-rank adapters: " + s.error());
        } else if (m_resumedPolicy) {
            // Into the policy only: the trainer has already frozen its copy of the run's reference.
            torch::NoGradGuard noGrad;
            auto into = trainer.policy()->parameters();
            auto from = m_resumedPolicy->parameters();
            for (size_t k = 0; k < into.size(); ++k)
                into[k].copy_(from[k]);
        }
        trainer.setPreferences(m_pairs.winners, m_pairs.losers, m_pairs.weights);
        if (m_spec.grouped)
            trainer.setPreferenceGroups(m_groups.groups);
        trainer.run(recorder, stop);
        FinishedEvent finished = recorder.finished().value_or(failed("the trainer did not finish"));
        if (m_store) { // what a server that went away kept from the store: sent before the end is recorded
            Status kept = retryWhileUnreachable(
                [&]() -> Status {
                    return recorder.everythingRecorded() ? Status(Ok{})
                                                         : makeError(ErrorCode::Unreachable, "it does not answer");
                },
                "the run's metrics and checkpoints", m_listener, m_stop, m_spec.storeWaitSeconds);
            if (!kept)
                m_unrecorded = kept.error();
        }
        if (!recorder.lastModelId().empty())
            m_outcome.resultModelId = recorder.lastModelId();
        if (recorder.lostStore().empty() && !recorder.failedWrite().empty()) { // a full disk, a read-only file
            finished.error = unrecordedEndMessage(finished.status, finished.error, recorder.failedWrite(),
                                                  finished.lastCheckpointPath);
            finished.status = RunStatus::Failed;
        } else if (!recorder.lostStore().empty()) {
            finished.status = RunStatus::Failed;
            finished.error =
                recorder.lostStore() + "; the run could not be recorded and was stopped" +
                (finished.lastCheckpointPath.empty() ? std::string()
                                                     : "; its last checkpoint: " + finished.lastCheckpointPath);
        }
        return finished;
    }

    /// Records how the run ended, releases its folder, then tells the listener (exactly once).
    DpoJobOutcome finish(FinishedEvent finished)
    {
        if (m_store && m_outcome.runId > 0) {
            Status s = m_unrecorded.empty() ? retryWhileUnreachable(
                                                  [&] {
                                                      return m_store->finishRun(m_outcome.runId, finished.status,
                                                                                finished.error, m_outcome.resultModelId);
                                                  },
                                                  "the run's end", m_listener, m_stop, m_spec.storeWaitSeconds)
                                            : makeError(ErrorCode::Unreachable, m_unrecorded);
            if (!s) {
                // Never an exit that looks like success with the end unrecorded: a server out of
                // reach gets the command that records it later; a full disk, the checkpoint's path.
                const bool later = s.errorCode() == ErrorCode::Unreachable;
                finished.error = unrecordedEndMessage(
                    finished.status, finished.error, s.error(), finished.lastCheckpointPath,
                    later ? "when the server is back, record it with: " +
                                recordRunLaterCommand(m_spec.storePath, m_outcome.runId, finished.status,
                                                      finished.lastCheckpointPath)
                          : std::string());
                finished.status = RunStatus::Failed;
            }
        }
        m_lock.release(); // after the status is written: a live lock always means a live run
        if (finished.status == RunStatus::Failed && m_madeFolder)
            removeIfEmpty(m_spec.outputFolder); // a failed run leaves no empty folder behind
        m_outcome.finished = std::move(finished);
        m_listener.onFinished(m_outcome.finished);
        return m_outcome;
    }

    DpoJobSpec m_spec;
    TrainListener& m_listener;
    const StopToken& m_stop;
    const bool m_resuming;
    DpoRunGroup m_group; ///< its place in a data-parallel run, if it is one
    const bool m_main;   ///< one process, or rank 0: reads the store, records, writes
    DpoJobOutcome m_outcome;
    torch::Device m_device{torch::kCPU};
    OpenedModel m_model;
    CheckpointInfo m_reference;
    std::unique_ptr<PreferenceStore> m_store;
    std::string m_unrecorded; ///< why what the run kept could not be sent to its store; "" when it was
    RunLock m_lock;
    bool m_madeFolder = false; ///< the output folder did not exist before this run
    TrainingPairs m_pairs;
    GroupedPairs m_groups; ///< with grouped scoring
    std::optional<DpoResumePoint> m_resumePoint;
    Denoiser m_resumedPolicy{nullptr};
};

} // namespace

DpoJobOutcome runDpoJob(const DpoJobSpec& spec, TrainListener& listener, const StopToken& stop)
{
    return DpoRun(spec, listener, stop).run();
}

} // namespace d2dpo
