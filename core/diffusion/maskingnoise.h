// SPDX-License-Identifier: GPL-3.0-or-later
// Masking noise: each position independently keeps its clean token with probability t, else
// becomes the mask M = S. The reverse process may re-mask unmasked positions at rate eta
// (Campbell et al.), which scales the D2-DPO divergence by (1 + eta t).
#pragma once

#include "diffusion/noiseprocess.h"

namespace d2dpo {

class MaskingNoise final : public NoiseProcess {
public:
    MaskingNoise(int64_t vocabSize, double eta);

    std::string name() const override { return "masking"; }
    int64_t vocabSize() const override { return m_vocabSize; }
    int64_t stateCount() const override { return m_vocabSize + 1; }
    int64_t maskToken() const { return m_vocabSize; }
    double eta() const { return m_eta; }

    torch::Tensor corruptWhere(const torch::Tensor& x1, const torch::Tensor& select,
                               torch::Generator& generator) const override;
    torch::Tensor prior(int64_t count, int64_t length, torch::Device device,
                        torch::Generator& generator) const override;
    /// (1 + eta t)/(1 - t) * sum_d [x_t^d == M] (log p_theta(x_1^d|x_t) - log p_ref(x_1^d|x_t)).
    torch::Tensor divergence(const torch::Tensor& xt, const torch::Tensor& x1, const torch::Tensor& logpTheta,
                             const torch::Tensor& logpRef, const torch::Tensor& t) const override;
    /// The masked positions: only they enter the divergence (the eta rates out of real tokens are
    /// the same for policy and reference and cancel).
    torch::Tensor positionsRead(const torch::Tensor& xt) const override;
    torch::Tensor readMask(const torch::Tensor& xt) const override { return xt.eq(maskToken()); }
    torch::Tensor divergenceAt(const torch::Tensor& xt, const torch::Tensor& x1, const torch::Tensor& positions,
                               const torch::Tensor& logpThetaAt, const torch::Tensor& logpRefAt,
                               const torch::Tensor& t) const override;
    /// (1 + eta t)/(1 - t) [x_t == M][j == x_1] to real tokens; eta [x_t != M] to M.
    torch::Tensor conditionalRate(const torch::Tensor& xt, const torch::Tensor& x1,
                                  const torch::Tensor& t) const override;
    /// (1 + eta t)/(1 - t) p(j | x_t) from a mask to real token j; eta from a real token to M.
    torch::Tensor modelRate(const torch::Tensor& xt, const torch::Tensor& probs,
                            const torch::Tensor& t) const override;

    /// The rate factor (1 + eta t)/(1 - t), t [B] -> [B].
    torch::Tensor rateFactor(const torch::Tensor& t) const;

private:
    int64_t m_vocabSize;
    double m_eta;
};

} // namespace d2dpo
