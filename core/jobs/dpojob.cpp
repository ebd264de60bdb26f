// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/dpojob.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "base/metricnames.h"
#include "base/cputhreads.h"
#include "jobs/checkpointrecord.h"
#include "jobs/openmodel.h"
#include "jobs/runpolicy.h"
#include "model/device.h"
#include "train/dpotrainer.h"
#include "train/evaluation.h"
#include "diffusion/noiseprocess.h"
#include "store/preferencestore.h"
#include "tasks/task.h"

namespace d2dpo {

namespace {

using json = nlohmann::json;

/// The store's decisive labels of the task's sequences as (winners, losers) [P, D] int64, read
/// with the task; labels of other tasks are left out and counted in the log.
Result<std::pair<torch::Tensor, torch::Tensor>> storePreferences(PreferenceStore& store, const Task& task,
                                                                 TrainListener& listener)
{
    const int64_t length = task.length();
    auto records = store.preferences();
    if (!records)
        return makeError(records.error());
    if (const UsablePairs pairs = countUsablePairs(records.value(), task.key()); pairs.otherTask > 0)
        listener.onLog(std::to_string(pairs.otherTask) + " labelled pairs of other tasks than the reference's (" +
                       task.key() + ") are left out");
    std::vector<int64_t> winners, losers;
    for (const PreferenceRecord& r : records.value()) {
        if (r.task != task.key())
            continue;
        for (const auto& [text, into] : {std::pair{&r.chosen, &winners}, std::pair{&r.rejected, &losers}}) {
            auto tokens = task.parse(*text);
            if (!tokens)
                return makeError("a stored preference cannot be read: " + tokens.error());
            into->insert(into->end(), tokens->begin(), tokens->end());
        }
    }
    if (winners.empty())
        return makeError("the store has no decisive labels (left/right) of this task (" + task.key() +
                         ") to train on; label some pairs first");
    const int64_t count = int64_t(winners.size()) / length;
    return std::pair{torch::tensor(winners).view({count, length}), torch::tensor(losers).view({count, length})};
}

/// Mirrors the run into the store. Metric points are buffered and written in one transaction
/// every so often (a durable commit per step would cost more than a small training step), and
/// always at evaluations and at the end. Holds back onFinished: the job forwards it once the
/// result is recorded, so whoever listens finds the fine-tuned model already in the store.
class StoreRecorder final : public TrainListener {
public:
    StoreRecorder(TrainListener& forward, PreferenceStore* store, int64_t runId)
        : m_forward(forward)
        , m_store(store)
        , m_runId(runId)
    {
    }
    ~StoreRecorder() override { flush(); }

    void onProgress(const ProgressEvent& e) override
    {
        record(e.step, metric::kLoss, e.loss);
        if (e.rewards)
            for (const auto& [name, value] : metric::named(*e.rewards))
                record(e.step, name, value);
        record(e.step, metric::kStepsPerSecond, e.stepsPerSecond);
        if (m_pending.size() >= 200)
            flush();
        m_forward.onProgress(e);
    }
    void onEvaluation(const EvaluationEvent& e) override
    {
        for (const auto& [name, value] : metric::recorded(e.metrics))
            record(e.step, e.ofReference ? metric::ofReference(name) : std::string(name), value);
        flush();
        m_forward.onEvaluation(e);
    }
    void onCheckpoint(const CheckpointEvent& e) override { m_forward.onCheckpoint(e); }
    void onFinished(const FinishedEvent& e) override
    {
        flush();
        m_finished = e;
    }
    void onLog(const std::string& line) override { m_forward.onLog(line); }

    const std::optional<FinishedEvent>& finished() const { return m_finished; }

private:
    void record(int64_t step, const std::string& name, double value)
    {
        if (m_store)
            m_pending.push_back({step, name, value});
    }
    void flush()
    {
        if (!m_store || m_pending.empty())
            return;
        if (Status s = m_store->appendMetrics(m_runId, m_pending); !s)
            m_forward.onLog("warning: " + s.error());
        m_pending.clear();
    }

    TrainListener& m_forward;
    PreferenceStore* m_store;
    int64_t m_runId;
    std::vector<MetricPoint> m_pending;
    std::optional<FinishedEvent> m_finished;
};

FinishedEvent failedBeforeTraining(const std::string& error)
{
    FinishedEvent finished;
    finished.status = RunStatus::Failed;
    finished.error = error;
    return finished;
}

} // namespace

std::string preferenceSourceJson(PreferenceSource source, int64_t pairs, const std::string& rule)
{
    return json{{"source", source == PreferenceSource::StoreLabels ? "store-labels" : "rule:" + rule}, {"pairs", pairs}}
        .dump();
}

DpoJobOutcome runDpoJob(const DpoJobSpec& spec, TrainListener& listener, const StopToken& stop)
{
    DpoJobOutcome outcome;
    std::unique_ptr<PreferenceStore> store;
    auto finishWith = [&](FinishedEvent finished) {
        if (store && outcome.runId > 0) {
            if (Status s = store->finishRun(outcome.runId, toString(finished.status), finished.error,
                                            outcome.resultModelId);
                !s)
                listener.onLog("warning: " + s.error());
        }
        outcome.finished = std::move(finished);
        listener.onFinished(outcome.finished);
        return outcome;
    };

    try {
        if (Status s = validate(spec.dpo); !s)
            return finishWith(failedBeforeTraining(s.error()));
        if (Status s = validate(spec.sampling); !s)
            return finishWith(failedBeforeTraining(s.error()));
        if (spec.source == PreferenceSource::RulePairs && spec.rulePairs < 1)
            return finishWith(failedBeforeTraining("the number of rule-made pairs must be at least 1"));
        if (spec.source == PreferenceSource::StoreLabels && spec.storePath.empty())
            return finishWith(failedBeforeTraining("training on the experts' labels needs a preference store"));
        if (spec.outputFolder.empty())
            return finishWith(failedBeforeTraining("no folder was given for the checkpoints"));

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
            auto opened = PreferenceStore::open(spec.storePath);
            if (!opened)
                return finishWith(failedBeforeTraining(opened.error()));
            store = std::move(opened.value());
        }

        torch::Tensor winners, losers;
        if (spec.source == PreferenceSource::StoreLabels) {
            auto prefs = storePreferences(*store, task, listener);
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

        if (store) {
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
                                  {"seed", spec.seed},
                                  {"eta", reference.spec.noise.eta},
                                  {"reference_path", spec.referencePath},
                                  {"output_folder", spec.outputFolder}}
                                 .dump();
            run.device = device->str();
            auto runId = store->startRun(run);
            if (!runId)
                return finishWith(failedBeforeTraining(runId.error()));
            outcome.runId = runId.value();
            listener.onLog("run " + std::to_string(outcome.runId) + " recorded in " + spec.storePath);
        }

        std::error_code ec;
        std::filesystem::create_directories(spec.outputFolder, ec);
        if (ec)
            return finishWith(failedBeforeTraining("cannot create the checkpoint folder " + spec.outputFolder + ": " +
                                                   ec.message()));

        StoreRecorder recorder(listener, store.get(), outcome.runId);
        DpoTrainer trainer(loaded->model, task, noise, reference.spec, spec.dpo, spec.sampling,
                           spec.seed);
        trainer.setPreferences(winners, losers);
        trainer.setCheckpointing(spec.outputFolder, reference.id);
        const uint64_t evaluationSeed = spec.seed + 1;
        trainer.setEvaluationSeed(evaluationSeed);
        if (spec.evaluateReference && !stop.stopRequested()) {
            listener.onLog("measuring the reference on " + std::to_string(spec.dpo.evalSamples) + " samples");
            torch::NoGradGuard noGrad;
            auto generator = makeGenerator(evaluationSeed, device.value());
            Denoiser frozen = trainer.reference();
            const SampleMetrics metrics = evaluateModel(frozen, task, reference.spec.noise, spec.sampling,
                                                        spec.dpo.evalSamples, generator);
            recorder.onEvaluation({0, metrics, true});
        }
        trainer.run(recorder, stop);
        FinishedEvent finished = recorder.finished().value_or(failedBeforeTraining("the trainer did not finish"));

        if (store && !finished.lastCheckpointPath.empty()) {
            auto result = loadCheckpoint(finished.lastCheckpointPath, torch::kCPU);
            if (!result) {
                listener.onLog("warning: the fine-tuned checkpoint cannot be read back: " + result.error());
            } else {
                ModelRecord model = modelRecordFor(result->info, finished.lastCheckpointPath,
                                              "d2dpo run " + std::to_string(outcome.runId) + " step " +
                                                  std::to_string(result->info.step));
                model.runId = outcome.runId;
                if (Status s = store->addModel(model); !s)
                    listener.onLog("warning: " + s.error());
                else
                    outcome.resultModelId = model.id;
            }
        }
        return finishWith(std::move(finished));
    } catch (const std::exception& e) {
        return finishWith(failedBeforeTraining(std::string("D2-DPO training failed: ") + e.what()));
    }
}

} // namespace d2dpo
