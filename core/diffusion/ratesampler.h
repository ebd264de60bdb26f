// SPDX-License-Identifier: GPL-3.0-or-later
// Euler sampling on a noise process's model rates, for any NoiseProcess (the sampler of uniform
// noise, which has no exact one): from noise->prior() at t = 0, K steps of dt = 1/K. In each, every
// position jumps with probability min(1, dt * its total off-diagonal rate R^theta_t(x, .)) to a
// state j drawn in proportion to R^theta_t(x, j). The last step takes the t -> 1 limit instead:
// rates into real tokens grow as 1/(1 - t), so a position they act on ends at a draw from
// p_theta(. | x_t). With uniform noise that is every position. A process with states beyond the
// real tokens (masking's M) only leaves those: there a real token was reached as x_1 itself, its
// rates stay bounded, and the denoiser was never trained to predict it (masking's loss reads
// masked positions only), so it is kept, as EulerSampler keeps it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <torch/types.h>

#include "diffusion/noiseprocess.h"
#include "diffusion/sampler.h"
#include "model/denoiser.h"

namespace d2dpo {

class RateEulerSampler final : public Sampler {
public:
    /// The model predicts noise->vocabSize() real tokens. Used in inference mode, never modified.
    RateEulerSampler(Denoiser model, std::shared_ptr<const NoiseProcess> noise, int steps);

    torch::Tensor sample(int64_t count, torch::Generator& generator, int64_t batch = 1000) override;
    std::string describe() const override;
    int64_t passesPerBatch() const override;
    const SamplerCounters& counters() const override { return m_counters; }

    /// One step from time t: x [B, D] int64 -> x after dt (the t -> 1 limit when `last`).
    torch::Tensor step(const torch::Tensor& x, double t, double dt, bool last, torch::Generator& generator);

    int steps() const { return m_steps; }

private:
    torch::Tensor sampleBatch(int64_t count, torch::Generator& generator);

    Denoiser m_model;
    std::shared_ptr<const NoiseProcess> m_noise;
    int m_steps;
    SamplerCounters m_counters;
};

} // namespace d2dpo
