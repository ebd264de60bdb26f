// SPDX-License-Identifier: GPL-3.0-or-later
// DpoTrainer::run in named steps: check what it was given, set up the best-checkpoint rule, train
// step by step (losses read back from the device in batches, evaluations and checkpoints when
// due, a stop heard between steps and inside them), then the last evaluation and checkpoints.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>
#include <vector>

#include <torch/torch.h>

#include "base/failurereport.h"
#include "diffusion/sampler.h"
#include "distributed/traininggroup.h"
#include "io/checkpoint.h"
#include "model/device.h"
#include "model/loradenoiser.h"
#include "train/bestcheckpoint.h"
#include "train/dpotrainer.h"
#include "train/evaluation.h"

namespace d2dpo {

namespace {

/// Thrown inside a step when a stop is asked: the step is abandoned before its update.
struct StepStopped { };

} // namespace

/// One call of DpoTrainer::run, its state and its steps (a friend of DpoTrainer).
class DpoRunSteps {
public:
    DpoRunSteps(DpoTrainer& trainer, TrainListener& listener, const StopToken& stop)
        : t(trainer)
        , m_listener(listener)
        , m_stop(stop)
        , m_lastCheckpointStep(trainer.m_startStep)
    {
        m_finished.stepsDone = t.m_startStep;
        m_finished.lastCheckpointPath = t.m_resumedCheckpoint;
    }

    FinishedEvent run()
    {
        try {
            checkInputs();
            setUpBestCheckpoint();
            trainSteps();
            finish();
        } catch (const EvaluationStopped&) { // heard while the reference was measured for keepBest
            m_finished.status = RunStatus::Stopped;
        } catch (const GroupLost& lost) { // another rank stopped answering: this one stops where it is
            m_finished.status = RunStatus::Stopped;
            m_finished.error = lost.what();
            m_listener.onLog(lost.what());
        } catch (const std::exception& e) {
            m_finished.status = RunStatus::Failed;
            m_finished.error = "D2-DPO training failed: " + userMessage(e);
        }
        t.m_policy->eval();
        m_finished.elapsedSeconds = elapsed();
        m_listener.onFinished(m_finished);
        return m_finished;
    }

private:
    using Clock = std::chrono::steady_clock;

    /// A step run ahead of the host: its figures wait on the device until readBack().
    struct Unread {
        int64_t step;
        DpoTrainer::StepTensors figures;
        bool report;
    };

    double elapsed() const { return std::chrono::duration<double>(Clock::now() - m_start).count(); }

    /// What the trainer was given is usable: adapters made, pairs there and of the task's length.
    void checkInputs()
    {
        if (!t.m_setupError.empty())
            throw std::runtime_error(t.m_setupError);
        if (!t.m_winners.defined() || t.m_winners.size(0) == 0)
            throw std::runtime_error("no preference pairs to train on");
        if (const auto* adapted = dynamic_cast<const LoraDenoiser*>(t.m_policy.get()))
            m_listener.onLog("low-rank adapters of rank " + std::to_string(adapted->rank()) + " on " +
                             std::to_string(adapted->targets().size()) + " weight matrices: " +
                             std::to_string(adapted->trainedCount()) + " numbers trained, the model's own frozen");
        if (t.m_winners.sizes() != t.m_losers.sizes() || t.m_winners.size(1) != t.m_task.length())
            throw std::runtime_error("preference pairs do not match the task's sequence length");
        if (t.m_pairWeights.defined() &&
            (t.m_pairWeights.dim() != 1 || t.m_pairWeights.size(0) != t.m_winners.size(0) ||
             !torch::isfinite(t.m_pairWeights).all().item<bool>() || (t.m_pairWeights < 0).any().item<bool>() ||
             t.m_pairWeights.sum().item<double>() <= 0))
            throw std::runtime_error("the pairs' weights must be one finite, non-negative number per pair, not all 0");
    }

    /// DpoScheduleConfig::keepBest: the rule needs the reference's VSR, and a resumed run's
    /// earlier best stays the one to beat.
    void setUpBestCheckpoint()
    {
        // Every rank of a data-parallel run measures alike (only rank 0 writes): the ranks keep in step.
        if (t.m_schedule.keepBest.empty() || (t.m_checkpointFolder.empty() && !t.m_group))
            return;
        if (!t.m_referenceVsr) {
            t.m_reference->eval();
            t.m_referenceVsr = measure(t.m_reference).vsr();
        }
        m_best.emplace(t.m_schedule.keepBest, t.m_schedule.keepBestVsrSlack, *t.m_referenceVsr);
        const std::string earlier = (std::filesystem::path(t.m_checkpointFolder) / "best.d2dpo").string();
        std::error_code ec;
        if (t.m_startStep > 0 && !t.m_checkpointFolder.empty() && std::filesystem::exists(earlier, ec))
            if (auto kept = loadCheckpoint(earlier, torch::kCPU))
                if (auto metrics = sampleMetricsFromJson(kept->info.metricsJson))
                    if (m_best->offer(kept->info.step, metrics.value()))
                        m_finished.bestCheckpointPath = earlier;
    }

    /// The steps from the start (or the resumed step) to the last, until a stop, a failed step or
    /// a non-finite loss. Steps run ahead of the host by up to hostReadEvery().
    void trainSteps()
    {
        const size_t readEvery = size_t(t.hostReadEvery());
        for (int64_t step = t.m_startStep + 1; step <= t.m_config.steps; ++step) {
            // The ranks of a data-parallel run stop together, after the step in which one heard it.
            if (t.m_group ? t.m_groupStopAsked : m_stop.stopRequested()) {
                stopAfterReadingBack();
                return;
            }
            const bool report = step % std::max(1, t.m_schedule.logEvery) == 0 || step == t.m_config.steps;
            if (!runStep(step, report))
                return;
            const bool evaluationDue =
                t.m_schedule.evalEvery > 0 && step % t.m_schedule.evalEvery == 0 && step != t.m_config.steps;
            const bool checkpointDue = t.m_schedule.checkpointEvery > 0 && step % t.m_schedule.checkpointEvery == 0 &&
                                       step != t.m_config.steps;
            if ((m_unread.size() >= readEvery || step == t.m_config.steps || evaluationDue || checkpointDue) &&
                !readBack())
                return;
            if (evaluationDue && !evaluateUnlessStopped(step))
                return;
            if (checkpointDue)
                checkpoint(step);
        }
    }

    /// Runs `step` ahead of the host; false when a stop heard inside it abandoned it (the run then
    /// ends stopped). The ranks of a data-parallel run hear a stop only between steps: a step one
    /// rank abandoned would leave the others waiting for its gradients.
    bool runStep(int64_t step, bool report)
    {
        if (t.m_group) {
            m_unread.push_back({step, t.step(report), report});
            return true;
        }
        try {
            // Heard inside a step too, between its pieces and before its backward pass: a
            // step of a large model takes seconds. The weights stay the last whole step's.
            const PassWatch hearStop([this] {
                if (m_stop.stopRequested())
                    throw StepStopped();
            });
            m_unread.push_back({step, t.step(report), report});
            return true;
        } catch (const StepStopped&) {
            stopAfterReadingBack();
            return false;
        }
    }

    void stopAfterReadingBack()
    {
        if (readBack())
            m_finished.status = RunStatus::Stopped;
    }

    /// Reads the losses (and rewards) of the steps run ahead in one transfer and reports them in
    /// order; false when one is non-finite, which ends the run at its step.
    bool readBack()
    {
        if (m_unread.empty())
            return true;
        // One transfer: every loss, then the reward figures [4] of the steps that have them.
        std::vector<torch::Tensor> parts;
        for (const Unread& u : m_unread)
            parts.push_back(u.figures.loss.reshape({1}).to(torch::kFloat));
        for (const Unread& u : m_unread)
            if (u.figures.rewards.defined())
                parts.push_back(u.figures.rewards.to(torch::kFloat));
        const auto host = torch::cat(parts).to(torch::kCPU, torch::kDouble).contiguous();
        const double* loss = host.data_ptr<double>();
        const double* rewardFigures = loss + m_unread.size();
        for (size_t i = 0; i < m_unread.size(); ++i) {
            const Unread& u = m_unread[i];
            if (!std::isfinite(loss[i])) {
                failOnNonFiniteLoss(u, loss[i]);
                m_unread.clear();
                return false;
            }
            m_finished.stepsDone = u.step;
            std::optional<RewardStats> rewards;
            if (u.figures.rewards.defined()) {
                rewards = RewardStats{rewardFigures[0], rewardFigures[1], rewardFigures[2], rewardFigures[3]};
                rewardFigures += 4;
            }
            if (u.report) {
                const double seconds = elapsed();
                m_listener.onProgress(
                    {u.step, t.m_config.steps, loss[i], rewards, double(u.step - t.m_startStep) / seconds, seconds});
            }
        }
        m_unread.clear();
        return true;
    }

    void failOnNonFiniteLoss(const Unread& u, double loss)
    {
        m_finished.status = RunStatus::Failed;
        const bool applied = !u.figures.loss.is_cpu(); // on a GPU the update went ahead
        std::string kept = m_finished.stepsDone == t.m_startStep && t.m_startStep == 0
                               ? "no step completed, so the model was not changed"
                               : "the weights of step " + std::to_string(m_finished.stepsDone) + " are kept";
        if (applied)
            kept = "the update was applied on the device, so only a checkpoint written before step " +
                   std::to_string(u.step) + " holds good weights";
        m_finished.error = "D2-DPO loss became non-finite (" + std::to_string(loss) + ") at step " +
                           std::to_string(u.step) + "; " + kept + ". Try a lower learning rate or beta";
    }

    /// The last evaluation, then the best checkpoint said and the last weights written: the run's
    /// result is its last checkpoint. A non-finite loss leaves the weights of the last step
    /// untouched, so they are still good unless the previous update itself produced non-finite
    /// weights: then the last interval checkpoint stays the last good one.
    void finish()
    {
        t.m_policy->eval();
        if (m_finished.status == RunStatus::Completed)
            evaluateUnlessStopped(m_finished.stepsDone); // every step done, the last perhaps not measured
        if (m_best) {
            m_finished.bestDescription = m_best->describe();
            m_listener.onLog("best checkpoint by " + t.m_schedule.keepBest + ": " + m_finished.bestDescription);
            if (!m_finished.bestCheckpointPath.empty())
                m_listener.onCheckpoint({*m_best->bestStep(), m_finished.bestCheckpointPath});
        }
        // Not again when the last interval checkpoint already holds these weights.
        if (m_finished.stepsDone > m_lastCheckpointStep && allFinite(t.m_policy))
            checkpoint(m_finished.stepsDone);
    }

    SampleMetrics measure(Denoiser& model)
    {
        auto generator = makeGenerator(t.m_evalSeed, t.m_policy->parameters().front().device());
        // The ranks of a data-parallel run evaluate alike to the end (one that gave up alone would
        // leave the others waiting in the next step); a stop heard meanwhile ends them after the next step.
        SampleMetrics metrics =
            evaluateModel(model, t.m_task, t.m_spec.noise, t.m_sampling, t.m_schedule.evalSamples, generator,
                          t.m_group ? nullptr : &m_stop,
                          [this](double drawn, int64_t total) { m_listener.onEvaluationProgress(drawn, total); });
        metrics.seed = t.m_evalSeed;
        return metrics;
    }

    /// Evaluates the policy at `step` (and offers it as the best); false when a stop was heard
    /// inside the evaluation, which ends the run stopped.
    bool evaluateUnlessStopped(int64_t step)
    {
        try {
            evaluate(step);
            return true;
        } catch (const EvaluationStopped&) {
            m_finished.status = RunStatus::Stopped;
            m_lastMetrics = "{}";
            return false;
        }
    }

    void evaluate(int64_t step)
    {
        // Said before, not only after: an evaluation of a large model takes a while (the views show it).
        m_listener.onLog("evaluating step " + std::to_string(step) + " on " + std::to_string(t.m_schedule.evalSamples) +
                         " samples");
        const SampleMetrics metrics = measure(t.m_policy);
        m_lastMetrics = metrics.toJson();
        m_listener.onEvaluation({step, metrics});
        if (m_best && m_best->offer(step, metrics)) {
            std::string error;
            m_finished.bestCheckpointPath = t.saveCheckpoint(step, m_lastMetrics, error, "best.d2dpo");
            if (!error.empty())
                throw std::runtime_error("the best checkpoint: " + error);
        }
    }

    void checkpoint(int64_t step)
    {
        m_lastCheckpointStep = step;
        std::string error;
        const std::string path = t.saveCheckpoint(step, m_lastMetrics, error);
        if (!error.empty())
            throw std::runtime_error(error);
        if (!path.empty()) {
            m_finished.lastCheckpointPath = path;
            m_listener.onCheckpoint({step, path});
        }
    }

    DpoTrainer& t;
    TrainListener& m_listener;
    const StopToken& m_stop;
    const Clock::time_point m_start = Clock::now();
    FinishedEvent m_finished;
    std::string m_lastMetrics = "{}";
    std::optional<BestCheckpoint> m_best;
    int64_t m_lastCheckpointStep;
    std::vector<Unread> m_unread;
};

FinishedEvent DpoTrainer::run(TrainListener& listener, const StopToken& stop)
{
    m_stop = &stop;
    FinishedEvent finished = DpoRunSteps(*this, listener, stop).run();
    m_stop = nullptr;
    return finished;
}

} // namespace d2dpo
