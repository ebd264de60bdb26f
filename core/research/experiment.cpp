// SPDX-License-Identifier: GPL-3.0-or-later
#include "research/experiment.h"

#include <chrono>
#include <filesystem>
#include <optional>

#include <torch/torch.h>

#include "base/failurereport.h"
#include "base/samplingchecks.h"
#include "io/checkpoint.h"
#include "model/transformerdenoiser.h"
#include "model/device.h"
#include "train/dpotrainer.h"
#include "train/evaluation.h"
#include "train/gradientspread.h"
#include "diffusion/sampler.h"
#include "diffusion/noiseprocess.h"
#include "train/pretrainer.h"
#include "tasks/task.h"

namespace d2dpo {

namespace {

/// Forwards every event to the caller's listener and keeps a copy for the report.
class RecordingListener final : public TrainListener {
public:
    RecordingListener(PhaseListener& forward, std::vector<ProgressEvent>& progress,
                      std::vector<EvaluationEvent>& evaluations)
        : m_forward(forward)
        , m_progress(progress)
        , m_evaluations(evaluations)
    {
    }
    void onProgress(const ProgressEvent& e) override
    {
        m_progress.push_back(e);
        m_forward.onProgress(e);
    }
    void onEvaluation(const EvaluationEvent& e) override
    {
        m_evaluations.push_back(e);
        m_forward.onEvaluation(e);
    }
    void onCheckpoint(const CheckpointEvent& e) override { m_forward.onCheckpoint(e); }
    void onEvaluationProgress(double drawn, int64_t total) override { m_forward.onEvaluationProgress(drawn, total); }
    void onFinished(const FinishedEvent& e) override { m_forward.onFinished(e); }
    void onLog(const std::string& line) override { m_forward.onLog(line); }

private:
    PhaseListener& m_forward;
    std::vector<ProgressEvent>& m_progress;
    std::vector<EvaluationEvent>& m_evaluations;
};

double secondsSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

Status validate(const ReproduceConfig& c)
{
    for (const Status& s : {validate(c.spec), validate(c.pretrain), validate(c.dpo), validate(c.schedule), validate(c.sampling, c.spec.noise)})
        if (!s)
            return s;
    if (c.preferencePairs < 1)
        return makeError("preference pairs must be >= 1");
    return Ok{};
}

Result<ReproduceReport> reproduce(const ReproduceConfig& config, const std::string& deviceName,
                                  PhaseListener& listener, const StopToken& stop)
{
    if (Status s = validate(config); !s)
        return makeError(s.error());
    auto resolved = resolveDevice(deviceName);
    if (!resolved)
        return makeError(resolved.error());
    const torch::Device device = resolved.value();
    // A given reference brings its own task, model and noise (the rule asked for still applies).
    std::optional<LoadedCheckpoint> given;
    ModelSpec spec = config.spec;
    if (!config.referenceCheckpoint.empty()) {
        auto loaded = loadCheckpoint(config.referenceCheckpoint, device);
        if (!loaded)
            return makeError(loaded.error());
        given = std::move(loaded.value());
        spec = given->info.spec;
        if (!config.spec.task.rule.empty())
            spec.task.rule = config.spec.task.rule;
    }
    auto task = makeTask(spec.task);
    if (!task)
        return makeError(task.error());
    if (!task.value()->rule())
        return makeError("the experiment fine-tunes toward a rule; name one with --rule");
    auto noise = makeNoiseProcess(spec.noise, task.value()->vocabSize());
    if (!noise)
        return makeError(noise.error());

    ReproduceReport report;
    report.config = config;
    report.config.spec = spec;
    report.config.spec.task = task.value()->config(); // with its rule resolved
    report.sampler = describeSampling(spec.noise, config.sampling, spec.task.length);
    report.runtime = describeRuntime(device);
    const uint64_t evalSeed = config.seed + 1000;
    namespace fs = std::filesystem;
    const fs::path out(config.outputFolder);

    try {
        torch::manual_seed(config.seed); // weight initialisation
        Denoiser model = given ? given->model : makeDenoiser(spec, task.value()->vocabSize(), device);

        // 1. Pretraining (unless the reference was given).
        if (!given)
            listener.onPhase("pretrain", config.pretrain.steps);
        auto start = std::chrono::steady_clock::now();
        if (given) {
            report.pretrainFinished.status = RunStatus::Completed;
            report.pretrainFinished.lastCheckpointPath = config.referenceCheckpoint;
        } else {
            std::vector<EvaluationEvent> unused;
            RecordingListener recorder(listener, report.pretrainProgress, unused);
            Pretrainer pretrainer(model, *task.value(), *noise.value(), config.pretrain, config.seed);
            report.pretrainFinished = pretrainer.run(recorder, stop);
        }
        report.pretrainSeconds = secondsSince(start);
        if (report.pretrainFinished.status != RunStatus::Completed)
            return makeError(report.pretrainFinished.status == RunStatus::Stopped ? "stopped during pretraining"
                                                                                   : report.pretrainFinished.error);

        // 2. The reference model's metrics: the baseline of every curve.
        listener.onPhase("evaluate-reference", 0);
        start = std::chrono::steady_clock::now();
        {
            auto generator = makeGenerator(evalSeed, device);
            try {
                report.reference = evaluateModel(model, *task.value(), spec.noise, config.sampling,
                                                 config.schedule.evalSamples, generator, &stop);
            } catch (const EvaluationStopped&) {
                return makeError("stopped during the reference's evaluation");
            }
            report.reference.seed = evalSeed;
        }
        report.referenceEvalSeconds = secondsSince(start);
        report.evaluations.push_back({0, report.reference});
        listener.onEvaluation({0, report.reference});

        std::string referenceId = given ? given->info.id : newCheckpointId();
        if (given) {
            report.referenceCheckpoint = config.referenceCheckpoint;
        } else if (!config.outputFolder.empty()) {
            CheckpointInfo info{referenceId, "", "pretrained", report.config.spec, toJson(config.pretrain),
                                report.reference.toJson(), config.pretrain.steps, utcNow()};
            report.referenceCheckpoint = (out / "reference.d2dpo").string();
            if (Status s = saveCheckpoint(report.referenceCheckpoint, model, info); !s)
                return makeError(s.error());
        }

        // 3. D2-DPO on rule-made pairs: pairs the task's rule ranks apart (binary integers: winner
        // b_i for a random odd i, loser b_j for a random even j).
        listener.onPhase("d2dpo", config.dpo.steps);
        start = std::chrono::steady_clock::now();
        {
            auto pairGenerator = makeGenerator(config.seed + 2000, device);
            auto pairs = task.value()->rulePairs(config.preferencePairs, pairGenerator, device);
            if (!pairs)
                return makeError(pairs.error());
            const auto [winners, losers] = pairs.value();
            DpoTrainer trainer(model, *task.value(), *noise.value(),
                               DpoTrainerOptions(report.config.spec, config.dpo)
                                   .schedule(config.schedule)
                                   .sampling(config.sampling)
                                   .seed(config.seed)
                                   .evaluationSeed(evalSeed)
                                   .referenceVsr(report.reference.vsr())
                                   .checkpointFolder(config.outputFolder.empty() ? std::string()
                                                                                 : (out / "checkpoints").string())
                                   .parentId(referenceId));
            trainer.setPreferences(winners, losers);
            if (config.gradientDraws > 0) {
                Denoiser reference = trainer.reference();
                const GradientSpread spread = gradientSpread(model, reference, *noise.value(), winners, losers,
                                                             config.dpo, config.gradientDraws, config.seed + 3000);
                report.gradientStd = spread.std;
                report.gradientMeanNorm = spread.meanNorm;
            }
            RecordingListener recorder(listener, report.dpoProgress, report.evaluations);
            report.dpoFinished = trainer.run(recorder, stop);
        }
        report.dpoSeconds = secondsSince(start);
        report.finetunedCheckpoint = report.dpoFinished.lastCheckpointPath;
        if (report.dpoFinished.status == RunStatus::Failed)
            return makeError(report.dpoFinished.error);
        report.finetuned = report.evaluations.back().metrics;
    } catch (const std::exception& e) {
        return makeError(std::string("experiment failed: ") + userMessage(e));
    }
    return report;
}

} // namespace d2dpo
