// SPDX-License-Identifier: GPL-3.0-or-later
// The Euler CTMC sampler for the masking process, K steps of dt = 1/K from t = 0 (all masked):
// each masked position unmasks with probability min(1, dt (1 + eta t)/(1 - t)) to a token drawn
// from p_theta(. | x_t); with eta > 0 each unmasked position re-masks with probability eta dt,
// except on the last step, after which no mask remains. Seeded and batched.
//
// Exact shortcuts (Mode::Cached, the default), same samples as Mode::Reference for the same seed:
// - eta = 0: the unmask probability 1/(K - k) at step k makes each position's unmask step
//   uniform over 0..K-1, and each position draws its token once. Both are drawn up front; a step
//   then needs the denoiser only for the rows with a position unmasking in it (other rows cannot
//   change, and their outputs would never be used), for time-conditioned denoisers too.
// - eta > 0 with a time-independent denoiser: a row whose tokens did not change since its last
//   forward pass reuses its logits (MDLM's ddpm_cache). With time conditioning nothing is reused.
#pragma once

#include <cstdint>

#include <torch/types.h>

#include "diffusion/sampler.h"

namespace d2dpo {

class EulerSampler final : public Sampler {
public:
    enum class Mode {
        Reference, ///< the denoiser on the whole batch at every step
        Cached,    ///< the exact shortcuts above
    };

    /// `maskToken` = S. The model is used in inference mode; it is not modified.
    EulerSampler(Denoiser model, int64_t maskToken, int steps, double eta, Mode mode = Mode::Cached);

    /// `count` samples -> [count, D] int64 on the model's device, generated `batch` at a time.
    torch::Tensor sample(int64_t count, torch::Generator& generator, int64_t batch = 1000) override;
    std::string describe() const override;
    int64_t passesPerBatch() const override;

    /// One Euler step of the per-step algorithm from time t: x [B, D] int64 -> x after dt. On the
    /// last step every remaining mask is filled and nothing is re-masked.
    torch::Tensor step(const torch::Tensor& x, double t, double dt, bool last, torch::Generator& generator);

    /// The probability that a masked position unmasks in a step from t of length dt.
    static double unmaskProbability(double t, double dt, double eta);

    const SamplerCounters& counters() const override { return m_counters; }
    int steps() const { return m_steps; }

private:
    torch::Tensor sampleBatch(int64_t count, torch::Generator& generator);
    torch::Tensor sampleWithoutRemasking(int64_t count, torch::Generator& generator);
    torch::Tensor sampleWithRemasking(int64_t count, torch::Generator& generator);
    /// Logits of `rows` of x (all rows when undefined), counted.
    torch::Tensor forward(const torch::Tensor& x, double t, const torch::Tensor& rows = {});
    torch::TensorOptions realOptions(const torch::Tensor& like) const;

    Denoiser m_model;
    int64_t m_maskToken;
    int m_steps;
    double m_eta;
    Mode m_mode;
    SamplerCounters m_counters;
};

} // namespace d2dpo
