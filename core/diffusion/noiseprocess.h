// SPDX-License-Identifier: GPL-3.0-or-later
// The forward noise process q(x_t | x_1) and its rates, as an interface: masking (maskingnoise.h)
// and uniform (uniformnoise.h). The trainer and the samplers only call what is here. Time runs
// from t = 0 (noise) to t = 1 (data): each position is corrupted with probability 1 - t.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <torch/types.h>

#include "base/config.h"
#include "base/result.h"

namespace d2dpo {

class NoiseProcess {
public:
    virtual ~NoiseProcess() = default;

    virtual std::string name() const = 0;
    /// Number of real tokens S.
    virtual int64_t vocabSize() const = 0;
    /// Number of states a position can be in, V (S + 1 for masking: the mask state M = S).
    virtual int64_t stateCount() const = 0;

    /// x_1 [B, D] int64, t [B] float -> x_t ~ q(. | x_1) [B, D] int64: corruptWhere() on the
    /// positions a uniform draw puts at or above t (probability 1 - t each).
    torch::Tensor corrupt(const torch::Tensor& x1, const torch::Tensor& t, torch::Generator& generator) const;
    /// Corrupts exactly the positions where `select` [B, D] bool is true (masking: to M; uniform:
    /// to a uniformly drawn token, possibly the same one). Complementary masks use this.
    virtual torch::Tensor corruptWhere(const torch::Tensor& x1, const torch::Tensor& select,
                                       torch::Generator& generator) const = 0;
    /// The reverse process's start at t = 0: [count, length] int64 on `device` (masking: all M).
    virtual torch::Tensor prior(int64_t count, int64_t length, torch::Device device,
                                torch::Generator& generator) const = 0;

    /// Closed form of sum_d D^{theta,d}_ref(x_t | x_1) (paper, appendix E), per sequence.
    /// x_t, x_1 [B, D] int64; log-probabilities of policy and reference [B, D, S]; t [B] -> [B].
    virtual torch::Tensor divergence(const torch::Tensor& xt, const torch::Tensor& x1, const torch::Tensor& logpTheta,
                                     const torch::Tensor& logpRef, const torch::Tensor& t) const = 0;

    /// The positions whose denoiser output divergence() reads, as ascending flat indices into
    /// [B * D] int64 (for masking: the masked ones). The trainer computes the denoiser only there.
    virtual torch::Tensor positionsRead(const torch::Tensor& xt) const = 0;
    /// The same positions as a [B, D] bool mask (no host sync where the process can avoid one).
    virtual torch::Tensor readMask(const torch::Tensor& xt) const;

    /// divergence() from the log-probabilities at positionsRead(x_t) only, [P, S] each -> [B].
    virtual torch::Tensor divergenceAt(const torch::Tensor& xt, const torch::Tensor& x1, const torch::Tensor& positions,
                                       const torch::Tensor& logpThetaAt, const torch::Tensor& logpRefAt,
                                       const torch::Tensor& t) const = 0;

    /// Conditional rate R^q_t(x_t, j | x_1) to every state j: [B, D, V].
    virtual torch::Tensor conditionalRate(const torch::Tensor& xt, const torch::Tensor& x1,
                                          const torch::Tensor& t) const = 0;

    /// Model rate R^theta_t(x_t, j) = E_{p_theta(x_1|x_t)} R^q_t(x_t, j | x_1) (plus any
    /// reverse-time extra noise) to every state j, from probabilities [B, D, S]: [B, D, V].
    virtual torch::Tensor modelRate(const torch::Tensor& xt, const torch::Tensor& probs,
                                    const torch::Tensor& t) const = 0;
};

Result<std::unique_ptr<NoiseProcess>> makeNoiseProcess(const NoiseConfig& config, int64_t vocabSize);

} // namespace d2dpo
