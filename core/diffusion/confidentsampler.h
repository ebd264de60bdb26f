// SPDX-License-Identifier: GPL-3.0-or-later
// A few-pass sampler for the masking process without remasking (eta = 0), after MaskGIT and
// LLaDA's low-confidence remasking: K passes instead of the exact sampler's D. Pass j sees x at
// t_j = (positions unmasked so far) / D, draws a token at every masked position from
// p_theta(. | x_t) (Gumbel-max), and keeps the n_j draws it is surest of, n_j = round((j + 1) D / K)
// - round(j D / K), so that every position is unmasked after the K-th pass. Sureness is the drawn
// token's log-probability plus Gumbel noise scaled by (1 - t_j): early passes keep almost random
// positions, later ones the confident draws (MaskGIT's annealed choice temperature).
//
// It is not the model's distribution: the tokens of one pass are drawn independently of each
// other, and keeping the confident ones favours likely tokens (fewer distinct sequences). What it
// costs on each task is measured by bench/samplers.sh against the exact sampler (the figures:
// docs/paper-experiment.md). With K >= D it commits one position per pass.
#pragma once

#include "diffusion/sampler.h"

namespace d2dpo {

class ConfidentSampler final : public Sampler {
public:
    /// `maskToken` = S; `passes` = K >= 1 (more than D is taken as D).
    ConfidentSampler(Denoiser model, int64_t maskToken, int passes);

    torch::Tensor sample(int64_t count, torch::Generator& generator, int64_t batch = 1000) override;
    std::string describe() const override;
    int64_t passesPerBatch() const override;
    const SamplerCounters& counters() const override { return m_counters; }

    /// How many positions pass j of K unmasks in a sequence of `length` (sums to `length`).
    static int64_t positionsInPass(int64_t pass, int64_t passes, int64_t length);

private:
    torch::Tensor sampleBatch(int64_t count, torch::Generator& generator);

    Denoiser m_model;
    int64_t m_maskToken;
    int m_passes;
    SamplerCounters m_counters;
};

} // namespace d2dpo
