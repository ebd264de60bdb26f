// SPDX-License-Identifier: GPL-3.0-or-later
// What draws sequences from a denoiser: the one interface evaluation, pair generation, export and
// the benchmarks use, and the factory that picks the sampler for a noise process and settings.
//
//   masking, eta = 0, "exact"   ExactMaskingSampler: the continuous-time reverse process itself,
//                               one position unmasked per pass (D passes a sequence)
//   masking, eta > 0, "exact"   EulerSampler with a fine step (fineSteps(): at least 8 D steps)
//   masking, "euler"            EulerSampler with SamplingConfig::steps
//   masking, eta = 0,           ConfidentSampler: SamplingConfig::steps passes, each keeping the
//     "confident"               draws it is surest of (fast, not the model's distribution)
//   uniform                     RateEulerSampler (Euler on the model's rates), "exact" refining
//                               its step as for masking with eta > 0
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <torch/types.h>

#include "base/config.h"
#include "model/denoiser.h"

namespace d2dpo {

struct SamplerCounters {
    int64_t forwardPasses = 0; ///< denoiser calls
    int64_t rowsForwarded = 0; ///< sequences passed through the denoiser, summed over calls
    int64_t steps = 0;         ///< time steps (Euler steps, or unmask events for the exact sampler)
};

class Sampler {
public:
    virtual ~Sampler() = default;
    /// `count` samples -> [count, D] int64 on the model's device, generated `batch` at a time.
    /// The model is used in inference mode and not modified.
    virtual torch::Tensor sample(int64_t count, torch::Generator& generator, int64_t batch = 1000) = 0;
    /// How it samples, for logs and reports ("exact, one position per pass", "Euler, 64 steps").
    virtual std::string describe() const = 0;
    virtual const SamplerCounters& counters() const = 0;
    /// Passes of the model one batch makes: exact, for the exact and confident samplers; at most,
    /// for Euler (which skips a step where nothing in a row changes). Progress within a batch counts them.
    virtual int64_t passesPerBatch() const = 0;
};

/// A watch over every pass of a model on the calling thread (none by default): samplers call
/// samplerPass() before each pass of their model, so a long draw hears a stop between passes, not
/// only between batches (one batch of a large model takes minutes); D2-DPO's backward calls it
/// before each piece's forward and backward pass, so a step of a large model hears one too. The
/// watch may throw to end the work; watches nest (the innermost one is called).
class PassWatch {
public:
    explicit PassWatch(std::function<void()> beforePass);
    ~PassWatch();
    PassWatch(const PassWatch&) = delete;
    PassWatch& operator=(const PassWatch&) = delete;

private:
    std::function<void()> m_beforePass;
    const std::function<void()>* m_previous;
};
void samplerPass();

/// What every sampler's sample() does around its batches: inference mode, `count` sequences drawn
/// `batch` at a time with `sampleBatch(n)` and concatenated ([0, length] on `device` when count <= 0).
torch::Tensor sampleInBatches(int64_t count, int64_t batch, int64_t length, torch::Device device,
                              const std::function<torch::Tensor(int64_t)>& sampleBatch);

/// Whether `noise` has an exact sampler (the masking process without remasking), and so the
/// confident sampler too.
bool exactExists(const NoiseConfig& noise);

/// The Euler step count "exact" sampling uses where no exact sampler exists (eta > 0, uniform
/// noise): max(steps, 8 D), so that on average at most one position in eight moves per step.
int fineSteps(const SamplingConfig& sampling, int64_t length);

/// The sampler for a model of `noise` over `vocabSize` real tokens (see the table above).
std::unique_ptr<Sampler> makeSampler(Denoiser model, const NoiseConfig& noise, int64_t vocabSize,
                                     const SamplingConfig& sampling);

/// describe() of the sampler makeSampler() would make, without a model.
std::string describeSampling(const NoiseConfig& noise, const SamplingConfig& sampling, int64_t length);

} // namespace d2dpo
