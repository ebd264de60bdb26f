// SPDX-License-Identifier: GPL-3.0-or-later
// Uniform noise: each position independently keeps its clean token with probability t, else is
// replaced by a token drawn uniformly from the S real ones (possibly the same). There is no mask
// state, so every position carries information the denoiser must judge, and the D2-DPO divergence
// reads every position. Rates are Campbell et al. (2024)'s minimal rate plus detailed-balance
// noise eta, with c(t) = (1 + eta (t S + 1 - t)) / (1 - t):
//
//   R^q_t(x, j | x_1)  = c(t) [x != x_1][j == x_1] + eta [x == x_1]        (j != x)
//   R^theta_t(x, j)    = c(t) p_theta(j | x_t) + eta p_theta(x | x_t)       (j != x)
//
// and per position, with L(j) = log(c p_theta(j) + eta p_theta(x)) - log(c p_ref(j) + eta p_ref(x)),
//
//   D^d = [x != x_1] c L(x_1) + [x == x_1] eta sum_{j != x} L(j) + (c - eta (S - 1)) (p_theta(x) - p_ref(x)).
#pragma once

#include "diffusion/noiseprocess.h"

namespace d2dpo {

class UniformNoise final : public NoiseProcess {
public:
    UniformNoise(int64_t vocabSize, double eta);

    std::string name() const override { return "uniform"; }
    int64_t vocabSize() const override { return m_vocabSize; }
    int64_t stateCount() const override { return m_vocabSize; }
    double eta() const { return m_eta; }

    /// The selected positions get a uniformly drawn token from `generator`.
    torch::Tensor corruptWhere(const torch::Tensor& x1, const torch::Tensor& select,
                               torch::Generator& generator) const override;
    /// Uniformly drawn tokens.
    torch::Tensor prior(int64_t count, int64_t length, torch::Device device,
                        torch::Generator& generator) const override;
    /// The closed form in the header comment, summed over positions.
    torch::Tensor divergence(const torch::Tensor& xt, const torch::Tensor& x1, const torch::Tensor& logpTheta,
                             const torch::Tensor& logpRef, const torch::Tensor& t) const override;
    /// Every position 0..B*D-1: even an uncorrupted one has a policy-dependent exit rate.
    torch::Tensor positionsRead(const torch::Tensor& xt) const override;
    torch::Tensor divergenceAt(const torch::Tensor& xt, const torch::Tensor& x1, const torch::Tensor& positions,
                               const torch::Tensor& logpThetaAt, const torch::Tensor& logpRefAt,
                               const torch::Tensor& t) const override;
    /// c(t) [x_t != x_1][j == x_1] + eta [x_t == x_1][j != x_t]: [B, D, S], zero diagonal.
    torch::Tensor conditionalRate(const torch::Tensor& xt, const torch::Tensor& x1,
                                  const torch::Tensor& t) const override;
    /// c(t) p(j) + eta p(x_t) for j != x_t: [B, D, S], zero diagonal.
    torch::Tensor modelRate(const torch::Tensor& xt, const torch::Tensor& probs,
                            const torch::Tensor& t) const override;

    /// The rate factor c(t) = (1 + eta (t S + 1 - t)) / (1 - t), t [B] -> [B].
    torch::Tensor rateFactor(const torch::Tensor& t) const;

private:
    /// D^d per position, all arguments flat: x_t, x_1 [P] int64; log-probabilities [P, S]; c [P].
    torch::Tensor perPosition(const torch::Tensor& xt, const torch::Tensor& x1, const torch::Tensor& logpTheta,
                              const torch::Tensor& logpRef, const torch::Tensor& c) const;

    int64_t m_vocabSize;
    double m_eta;
};

} // namespace d2dpo
