// The Euler CTMC sampler for the masking process, K steps of dt = 1/K from t = 0 (all masked):
// each masked position unmasks with probability min(1, dt (1 + eta t)/(1 - t)) to a token drawn
// from p_theta(. | x_t); with eta > 0 each unmasked position re-masks with probability eta dt,
// except on the last step, after which no mask remains. Seeded and batched.
#pragma once

#include <cstdint>

#include <torch/types.h>

#include "denoiser.h"

namespace d2dpo {

struct SamplerCounters {
    int64_t forwardPasses = 0; ///< denoiser calls on a batch
    int64_t steps = 0;         ///< Euler steps taken
};

class EulerSampler {
public:
    /// `maskToken` = S. The model is used in inference mode; it is not modified.
    EulerSampler(Denoiser model, int64_t maskToken, int steps, double eta);

    /// `count` samples -> [count, D] int64 on the model's device, generated `batch` at a time.
    torch::Tensor sample(int64_t count, torch::Generator& generator, int64_t batch = 1000);

    /// One Euler step from time t: x [B, D] int64 -> x after dt. On the last step every
    /// remaining mask is filled and nothing is re-masked.
    torch::Tensor step(const torch::Tensor& x, double t, double dt, bool last, torch::Generator& generator);

    /// The probability that a masked position unmasks in a step from t of length dt.
    static double unmaskProbability(double t, double dt, double eta);

    const SamplerCounters& counters() const { return m_counters; }
    int steps() const { return m_steps; }

private:
    torch::Tensor sampleBatch(int64_t count, torch::Generator& generator);

    Denoiser m_model;
    int64_t m_maskToken;
    int m_steps;
    double m_eta;
    SamplerCounters m_counters;
};

} // namespace d2dpo
