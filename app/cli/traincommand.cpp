// `d2dpo train`: D2-DPO fine-tuning of a checkpoint on rule-made preference pairs (the paper's
// dataset: winner b_i for a random odd i, loser b_j for a random even j).
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <tuple>

#include <torch/torch.h>

#include "checkpoint.h"
#include "common.h"
#include "consolelistener.h"
#include "device.h"
#include "dpotrainer.h"
#include "noiseprocess.h"
#include "preferencestore.h"
#include "task.h"

namespace d2dpo::cli {

namespace {

struct TrainOptions {
    RuntimeOptions runtime;
    DpoConfig dpo;
    SamplingConfig sampling;
    std::string checkpoint;
    std::string rule = "odd";
    int64_t pairs = 20000;
    std::string out;
    std::string db; ///< train on the store's labels instead of rule-made pairs
};

/// The store's decisive labels as (winners, losers) [P, D]; pairs of another length are refused.
Result<std::pair<torch::Tensor, torch::Tensor>> storePreferences(PreferenceStore& store, int64_t length)
{
    auto records = store.preferences();
    if (!records)
        return makeError(records.error());
    std::vector<int64_t> winners, losers;
    for (const PreferenceRecord& r : records.value()) {
        if (int64_t(r.chosen.size()) != length || int64_t(r.rejected.size()) != length)
            return makeError("the store holds preferences of length " + std::to_string(r.chosen.size()) +
                             " but the model's sequences have length " + std::to_string(length));
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

/// Mirrors the run into the store: metric series per step, the result as a model with lineage.
class StoreRecorder final : public TrainListener {
public:
    StoreRecorder(TrainListener& forward, PreferenceStore& store, int64_t runId)
        : m_forward(forward)
        , m_store(store)
        , m_runId(runId)
    {
    }
    void onProgress(const ProgressEvent& e) override
    {
        std::map<std::string, double> values{{"loss", e.loss}};
        if (e.rewards) {
            values["rewards/chosen"] = e.rewards->chosen;
            values["rewards/rejected"] = e.rewards->rejected;
            values["rewards/margins"] = e.rewards->margins;
            values["rewards/accuracies"] = e.rewards->accuracies;
        }
        report(m_store.appendMetrics(m_runId, e.step, values));
        m_forward.onProgress(e);
    }
    void onEvaluation(const EvaluationEvent& e) override
    {
        report(m_store.appendMetrics(m_runId, e.step, {{"vsr", e.metrics.vsr}, {"odd_ratio", e.metrics.oddRatio}}));
        m_forward.onEvaluation(e);
    }
    void onCheckpoint(const CheckpointEvent& e) override { m_forward.onCheckpoint(e); }
    void onFinished(const FinishedEvent& e) override { m_forward.onFinished(e); }

private:
    void report(const Status& s)
    {
        if (!s)
            std::cerr << "d2dpo train: warning: " << s.error() << "\n";
    }
    TrainListener& m_forward;
    PreferenceStore& m_store;
    int64_t m_runId;
};

int run(const TrainOptions& o)
{
    if (Status s = validate(o.dpo); !s)
        return fail("train", s.error());
    if (Status s = validate(o.sampling); !s)
        return fail("train", s.error());
    if (o.pairs < 1)
        return fail("train", "--pairs must be >= 1");
    auto opened = openCheckpoint(o.runtime, o.checkpoint);
    if (!opened)
        return fail("train", opened.error());
    const torch::Device device = opened->device;
    LoadedCheckpoint& loaded = opened->checkpoint;
    const Task& task = *opened->task;
    auto noise = makeNoiseProcess(loaded.info.spec.noise, task.vocabSize());
    if (!noise)
        return fail("train", noise.error());

    std::unique_ptr<PreferenceStore> store;
    torch::Tensor winners, losers;
    if (!o.db.empty()) {
        auto opened = PreferenceStore::open(o.db);
        if (!opened)
            return fail("train", opened.error());
        store = std::move(opened.value());
        auto prefs = storePreferences(*store, task.length());
        if (!prefs)
            return fail("train", prefs.error());
        std::tie(winners, losers) = prefs.value();
        std::cerr << "d2dpo train: " << winners.size(0) << " labelled pairs from " << o.db << ", reference "
                  << loaded.info.id << "\n";
    } else {
        auto pairGenerator = makeGenerator(o.runtime.seed + 2000, device);
        std::tie(winners, losers) = task.rulePairs(o.pairs, pairGenerator, device);
        std::cerr << "d2dpo train: " << o.pairs << " rule-made pairs (" << o.rule << " preferred), reference "
                  << loaded.info.id << "\n";
    }

    DpoTrainer trainer(loaded.model, task, *noise.value(), loaded.info.spec, o.dpo, o.sampling,
                       o.runtime.seed);
    trainer.setPreferences(winners, losers);
    trainer.setCheckpointing(o.out, loaded.info.id);
    ConsoleListener console;
    console.onPhase("d2dpo", o.dpo.steps);
    StopToken stop;
    FinishedEvent done;
    if (store) {
        ModelRecord reference;
        reference.id = loaded.info.id;
        reference.parentId = loaded.info.parentId;
        reference.kind = loaded.info.kind;
        reference.name = "reference";
        reference.path = o.checkpoint;
        reference.specJson = toJson(loaded.info.spec);
        reference.trainingJson = loaded.info.trainingJson;
        reference.metricsJson = loaded.info.metricsJson;
        if (Status s = store->addModel(reference); !s)
            return fail("train", s.error());
        RunRecord run;
        run.kind = "d2dpo";
        run.referenceModelId = loaded.info.id;
        run.configJson = toJson(o.dpo);
        run.device = device.str();
        auto runId = store->startRun(run);
        if (!runId)
            return fail("train", runId.error());
        StoreRecorder recorder(console, *store, runId.value());
        done = trainer.run(recorder, stop);
        std::string resultId;
        if (!done.lastCheckpointPath.empty()) {
            if (auto result = loadCheckpoint(done.lastCheckpointPath, torch::kCPU)) {
                const auto& info = result->info;
                resultId = info.id;
                ModelRecord model;
                model.id = info.id;
                model.parentId = info.parentId;
                model.kind = info.kind;
                model.name = "d2dpo step " + std::to_string(info.step);
                model.path = done.lastCheckpointPath;
                model.specJson = toJson(info.spec);
                model.trainingJson = info.trainingJson;
                model.metricsJson = info.metricsJson;
                model.runId = runId.value();
                if (Status s = store->addModel(model); !s)
                    return fail("train", s.error());
            }
        }
        if (Status s = store->finishRun(runId.value(), toString(done.status), done.error, resultId); !s)
            return fail("train", s.error());
    } else {
        done = trainer.run(console, stop);
    }
    if (done.status == RunStatus::Failed)
        return fail("train", done.error + (done.lastCheckpointPath.empty()
                                               ? ""
                                               : " (last good checkpoint: " + done.lastCheckpointPath + ")"));
    std::cout << "fine-tuned checkpoint: " << done.lastCheckpointPath << "\n";
    return 0;
}

} // namespace

void registerTrain(CLI::App& app, int& exitCode)
{
    auto options = std::make_shared<TrainOptions>();
    CLI::App* c = app.add_subcommand("train", "Fine-tune a checkpoint with D2-DPO on rule-made preference pairs");
    addRuntimeOptions(c, options->runtime);
    addDpoOptions(c, options->dpo);
    addSamplingOptions(c, options->sampling);
    c->add_option("--checkpoint,-c", options->checkpoint, "Reference checkpoint (the policy starts equal to it)")
        ->required();
    c->add_option("--rule", options->rule, "Preference rule for the pairs")
        ->check(CLI::IsMember({"odd"}))
        ->capture_default_str();
    c->add_option("--pairs", options->pairs, "Number of rule-made pairs")->capture_default_str();
    c->add_option("--db", options->db,
                  "Train on the labels in this preference store (ties and skips left out) instead of rule-made "
                  "pairs; the run and the fine-tuned model are recorded there");
    c->add_option("--out,-o", options->out, "Folder for the checkpoints")->required();
    c->callback([options, &exitCode] { exitCode = run(*options); });
}

} // namespace d2dpo::cli
