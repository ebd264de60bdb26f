#include "dpojob.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "checkpoint.h"
#include "device.h"
#include "dpotrainer.h"
#include "evaluation.h"
#include "noiseprocess.h"
#include "preferencestore.h"
#include "task.h"

namespace d2dpo {

namespace {

using json = nlohmann::json;

/// The store's decisive labels as (winners, losers) [P, D] int64; other lengths are refused.
Result<std::pair<torch::Tensor, torch::Tensor>> storePreferences(PreferenceStore& store, int64_t length)
{
    auto records = store.preferences();
    if (!records)
        return makeError(records.error());
    std::vector<int64_t> winners, losers;
    for (const PreferenceRecord& r : records.value()) {
        if (int64_t(r.chosen.size()) != length || int64_t(r.rejected.size()) != length)
            return makeError("the store holds preferences of length " + std::to_string(r.chosen.size()) +
                             " but the reference model's sequences have length " + std::to_string(length));
        for (char c : r.chosen)
            winners.push_back(c - '0');
        for (char c : r.rejected)
            losers.push_back(c - '0');
    }
    if (winners.empty())
        return makeError("the store has no decisive labels (left/right) to train on; label some pairs first");
    const int64_t count = int64_t(records->size());
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
        record(e.step, "loss", e.loss);
        if (e.rewards) {
            record(e.step, "rewards/chosen", e.rewards->chosen);
            record(e.step, "rewards/rejected", e.rewards->rejected);
            record(e.step, "rewards/margins", e.rewards->margins);
            record(e.step, "rewards/accuracies", e.rewards->accuracies);
        }
        record(e.step, "steps_per_second", e.stepsPerSecond);
        if (m_pending.size() >= 200)
            flush();
        m_forward.onProgress(e);
    }
    void onEvaluation(const EvaluationEvent& e) override
    {
        const std::string prefix = e.ofReference ? "reference/" : "";
        record(e.step, prefix + "vsr", e.metrics.vsr);
        record(e.step, prefix + "odd_ratio", e.metrics.oddRatio);
        record(e.step, prefix + "odd_share_valid", e.metrics.oddShareValid);
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

std::string preferenceSourceJson(PreferenceSource source, int64_t pairs)
{
    return json{{"source", source == PreferenceSource::StoreLabels ? "store-labels" : "rule:odd"}, {"pairs", pairs}}
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

        auto device = resolveDevice(spec.device);
        if (!device)
            return finishWith(failedBeforeTraining(device.error()));
        listener.onLog(describeRuntime(device.value()));
        auto loaded = loadCheckpoint(spec.referencePath, device.value());
        if (!loaded)
            return finishWith(failedBeforeTraining(loaded.error()));
        CheckpointInfo reference = loaded->info;
        if (spec.eta) {
            reference.spec.noise.eta = *spec.eta;
            if (Status s = validate(reference.spec.noise); !s)
                return finishWith(failedBeforeTraining(s.error()));
        }
        auto task = makeTask(reference.spec.task);
        if (!task)
            return finishWith(failedBeforeTraining(task.error()));
        auto noise = makeNoiseProcess(reference.spec.noise, task.value()->vocabSize());
        if (!noise)
            return finishWith(failedBeforeTraining(noise.error()));
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
            auto prefs = storePreferences(*store, task.value()->length());
            if (!prefs)
                return finishWith(failedBeforeTraining(prefs.error()));
            std::tie(winners, losers) = prefs.value();
            listener.onLog(std::to_string(winners.size(0)) + " labelled pairs from the store (ties and skips left out)");
        } else {
            auto pairGenerator = makeGenerator(spec.seed + 2000, device.value());
            std::tie(winners, losers) = task.value()->rulePairs(spec.rulePairs, pairGenerator, device.value());
            listener.onLog(std::to_string(spec.rulePairs) + " rule-made pairs (odd preferred over even)");
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
                                  {"preferences", json::parse(preferenceSourceJson(spec.source, outcome.pairs))},
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
        DpoTrainer trainer(loaded->model, *task.value(), *noise.value(), reference.spec, spec.dpo, spec.sampling,
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
            const SampleMetrics metrics = evaluateModel(frozen, *task.value(), reference.spec.noise, spec.sampling,
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
