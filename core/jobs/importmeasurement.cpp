// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/importmeasurement.h"

#include <chrono>
#include <future>
#include <optional>
#include <mutex>
#include <thread>

#include "base/abandonablecall.h"
#include "model/device.h"
#include "train/evaluation.h"

namespace d2dpo {

namespace {

/// What the measuring thread owns: it outlives the caller when the call is abandoned, so nothing
/// in it refers to the caller's stack. Its listener forwards to the caller's only until then.
struct Measuring final : TrainListener {
    std::mutex forwarding;
    TrainListener* listener = nullptr; ///< null once abandoned
    EvaluationProgress progress;
    StopToken stop;

    void onLog(const std::string& line) override
    {
        std::lock_guard lock(forwarding);
        if (listener)
            listener->onLog(line);
    }
    void onEvaluationProgress(double drawn, int64_t total) override
    {
        std::lock_guard lock(forwarding);
        if (listener && progress)
            progress(drawn, total);
    }
    void abandon()
    {
        std::lock_guard lock(forwarding); // waits for a call being forwarded now
        listener = nullptr;
    }
};

} // namespace

ImportMeasurement measureImportedModel(const Denoiser& model, std::shared_ptr<const Task> task, const NoiseConfig& noise,
                                       const SamplingConfig& sampling, const SampleBudget& budget, uint64_t seed,
                                       torch::Device device, TrainListener& listener, const StopToken& stop,
                                       const EvaluationProgress& progress)
{
    auto measuring = std::make_shared<Measuring>();
    measuring->listener = &listener;
    measuring->progress = progress;
    // Copies the thread owns (a captured const reference would stay const).
    Denoiser measured = model;
    SamplingConfig settings = sampling;
    auto work = std::make_shared<std::packaged_task<SampleMetrics()>>(
        [measuring, model = measured, task, noise, sampling = settings, budget, seed, device]() mutable {
            auto generator = makeGenerator(seed, device);
            const FittedCount count = fittedEvaluationCount(model, *task, noise, sampling, budget, *measuring);
            return evaluateModel(model, *task, noise, sampling, count.samples, generator, &measuring->stop,
                                 [measuring](double drawn, int64_t total) {
                                     measuring->onEvaluationProgress(drawn, total);
                                 });
        });
    std::future<SampleMetrics> done = work->get_future();
    std::thread worker([work] { (*work)(); });
    using Clock = std::chrono::steady_clock;
    std::optional<Clock::time_point> graceEnds;
    while (done.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) {
        if (!graceEnds && stop.stopRequested()) {
            measuring->stop.requestStop(); // heard at the sampler's next batch
            graceEnds = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(kMeasurementGraceSeconds));
        }
        if (graceEnds && Clock::now() >= *graceEnds) {
            measuring->abandon();
            worker.detach();
            countAbandonedCall();
            return {MeasurementEnd::Abandoned, {}};
        }
    }
    worker.join();
    try {
        return {MeasurementEnd::Measured, done.get()};
    } catch (const EvaluationStopped&) {
        return {MeasurementEnd::Stopped, {}};
    }
}

} // namespace d2dpo
