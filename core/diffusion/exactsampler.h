// SPDX-License-Identifier: GPL-3.0-or-later
// The exact sampler of the masking process without remasking (eta = 0): the continuous-time
// reverse process itself, with no time discretisation. Every masked position unmasks at rate
// 1/(1 - t) whatever the tokens are, so the unmask times are independent U(0, 1) draws, one per
// position, and their order is a uniformly random permutation. The sampler draws them up front
// and then unmasks one position per pass, at its own time, to a token drawn from
// p_theta(. | x_t) with the positions unmasked before it in place: D passes per sequence, and
// exactly the model's distribution (Euler steps unmask several positions of one step
// independently of each other, which is what costs validity at longer lengths).
#pragma once

#include "diffusion/sampler.h"

namespace d2dpo {

class ExactMaskingSampler final : public Sampler {
public:
    /// `maskToken` = S.
    ExactMaskingSampler(Denoiser model, int64_t maskToken);

    torch::Tensor sample(int64_t count, torch::Generator& generator, int64_t batch = 1000) override;
    std::string describe() const override;
    int64_t passesPerBatch() const override;
    const SamplerCounters& counters() const override { return m_counters; }

    /// The unmask order of `count` sequences of `length`: [count, length] int64, row i listing the
    /// positions in the order they unmask, and their times [count, length] ascending in [0, 1).
    static std::pair<torch::Tensor, torch::Tensor> unmaskSchedule(int64_t count, int64_t length,
                                                                  torch::Generator& generator,
                                                                  const torch::TensorOptions& realOptions);

private:
    torch::Tensor sampleBatch(int64_t count, torch::Generator& generator);

    Denoiser m_model;
    int64_t m_maskToken;
    SamplerCounters m_counters;
};

} // namespace d2dpo
