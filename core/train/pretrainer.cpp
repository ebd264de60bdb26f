// SPDX-License-Identifier: GPL-3.0-or-later
#include "train/pretrainer.h"

#include <chrono>
#include <cmath>

#include <torch/torch.h>

#include "base/failurereport.h"
#include "model/device.h"
#include "diffusion/losses.h"

namespace d2dpo {

Pretrainer::Pretrainer(Denoiser model, const Task& task, const NoiseProcess& noise, PretrainConfig config,
                       uint64_t seed)
    : m_model(std::move(model))
    , m_task(task)
    , m_noise(noise)
    , m_config(config)
    , m_seed(seed)
{
}

double Pretrainer::trainStep()
{
    const auto device = m_model->parameters().front().device();
    if (!m_optimizer) {
        m_generator = makeGenerator(m_seed, device);
        m_optimizer = std::make_unique<FusedAdam>(m_model->parameters(),
                                                           torch::optim::AdamOptions(m_config.learningRate));
        m_model->train();
    }
    const auto x1 = m_task.sampleData(m_config.batch, *m_generator, device);
    const auto loss = pretrainLoss(m_model, m_noise, x1, *m_generator, m_config.elboWeighting);
    const double lossValue = loss.item<double>();
    if (!std::isfinite(lossValue))
        return lossValue;
    dropGradients(m_model);
    loss.backward();
    m_optimizer->step();
    return lossValue;
}

void Pretrainer::writeSnapshots(int64_t every, SnapshotWriter write)
{
    m_snapshotEvery = every;
    m_writeSnapshot = std::move(write);
}

FinishedEvent Pretrainer::run(TrainListener& listener, const StopToken& stop)
{
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    FinishedEvent finished;
    try {
        for (int64_t step = 1; step <= m_config.steps; ++step) {
            if (stop.stopRequested()) {
                finished.status = RunStatus::Stopped;
                break;
            }
            const double lossValue = trainStep();
            if (!std::isfinite(lossValue)) {
                finished.status = RunStatus::Failed;
                finished.error = "pretraining loss became non-finite (" + std::to_string(lossValue) + ") at step " +
                                 std::to_string(step) + "; try a lower learning rate";
                break;
            }
            finished.stepsDone = step;
            if (m_snapshotEvery > 0 && m_writeSnapshot && step % m_snapshotEvery == 0 && step != m_config.steps) {
                if (Status s = m_writeSnapshot(step); !s) {
                    finished.status = RunStatus::Failed;
                    finished.error = s.error();
                    break;
                }
            }
            if (step % std::max(1, m_config.logEvery) == 0 || step == m_config.steps) {
                const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
                listener.onProgress({step, m_config.steps, lossValue, std::nullopt, step / elapsed, elapsed});
            }
        }
    } catch (const std::exception& e) {
        finished.status = RunStatus::Failed;
        finished.error = "pretraining failed: " + userMessage(e);
    }
    m_model->eval();
    finished.elapsedSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    listener.onFinished(finished);
    return finished;
}

} // namespace d2dpo
