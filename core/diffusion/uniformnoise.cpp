// SPDX-License-Identifier: GPL-3.0-or-later
// Uniform noise (see uniformnoise.h for the rates and the closed-form divergence).
//
// Where the rates come from: q_t(x | x_1) = t [x == x_1] + (1 - t)/S. Campbell et al.'s minimal
// rate ReLU(d/dt q_t(j) - d/dt q_t(x)) / (S q_t(x)) is 1/(1 - t) from x != x_1 to j = x_1 and zero
// otherwise. Detailed-balance noise with rate eta out of x_1 must satisfy
// q_t(x_1) eta = q_t(j) R(j -> x_1), so R(j -> x_1) gains eta (t S + 1 - t)/(1 - t); rates between
// two states other than x_1 stay zero (balance holds trivially). Summed: c(t) into x_1, eta out of it.
#include "diffusion/uniformnoise.h"

#include <cmath>

#include <torch/torch.h>

#include "model/flatpositions.h"

namespace d2dpo {

UniformNoise::UniformNoise(int64_t vocabSize, double eta) : m_vocabSize(vocabSize), m_eta(eta) {}

torch::Tensor UniformNoise::corruptWhere(const torch::Tensor& x1, const torch::Tensor& select,
                                         torch::Generator& generator) const
{
    return torch::where(select, torch::randint(0, m_vocabSize, x1.sizes(), generator, x1.options()), x1);
}

torch::Tensor UniformNoise::prior(int64_t count, int64_t length, torch::Device device,
                                  torch::Generator& generator) const
{
    return torch::randint(0, m_vocabSize, {count, length}, generator, torch::dtype(torch::kLong).device(device));
}

torch::Tensor UniformNoise::rateFactor(const torch::Tensor& t) const
{
    return (1 + m_eta * (t * double(m_vocabSize) + 1 - t)) / (1 - t);
}

torch::Tensor UniformNoise::perPosition(const torch::Tensor& xt, const torch::Tensor& x1,
                                        const torch::Tensor& logpTheta, const torch::Tensor& logpRef,
                                        const torch::Tensor& c) const
{
    const auto self = xt.unsqueeze(1);                                                   // [P, 1]
    const auto logC = c.log().unsqueeze(1);                                              // [P, 1]
    // log R(x_t -> j) = log(c p(j) + eta p(x_t)), in log space so that small probabilities keep
    // their precision. Without eta the c cancels in the ratio and L is the plain log-prob ratio.
    const auto logRate = [&](const torch::Tensor& logp) {
        if (m_eta == 0)
            return logp;
        return torch::logaddexp(logC + logp, std::log(m_eta) + logp.gather(1, self));
    };
    const auto logRatio = logRate(logpTheta) - logRate(logpRef);                         // [P, S]: L(j)
    // Corrupted positions: only j = x_1 has conditional rate (c). Clean ones: every j != x_t (eta);
    // the diagonal is zeroed rather than subtracted, which would cancel badly when p(x_t) is tiny.
    const auto toTarget = c * logRatio.gather(1, x1.unsqueeze(1)).squeeze(1);           // [P]
    const auto outOfClean = m_eta * logRatio.scatter(1, self, 0.0).sum(1);              // [P]
    const auto logTerm = torch::where(xt.ne(x1), toTarget, outOfClean);
    // Exit rates: sum_{j != x} (c p(j) + eta p(x)) = c (1 - p(x)) + eta (S - 1) p(x), so the
    // reference-minus-policy difference depends on p(x_t) alone.
    const auto exitGap = (c - m_eta * double(m_vocabSize - 1)) *
                         (logpTheta.gather(1, self).exp() - logpRef.gather(1, self).exp()).squeeze(1);
    return logTerm + exitGap;
}

torch::Tensor UniformNoise::divergence(const torch::Tensor& xt, const torch::Tensor& x1, const torch::Tensor& logpTheta,
                                       const torch::Tensor& logpRef, const torch::Tensor& t) const
{
    const int64_t batch = xt.size(0), length = xt.size(1);
    const auto c = rateFactor(t).unsqueeze(1).expand({batch, length}).reshape({-1});
    const auto values = perPosition(xt.reshape({-1}), x1.reshape({-1}), logpTheta.reshape({-1, m_vocabSize}),
                                    logpRef.reshape({-1, m_vocabSize}), c);
    return values.view({batch, length}).sum(1);
}

torch::Tensor UniformNoise::positionsRead(const torch::Tensor& xt) const
{
    return torch::arange(xt.numel(), torch::dtype(torch::kLong).device(xt.device()));
}

torch::Tensor UniformNoise::divergenceAt(const torch::Tensor& xt, const torch::Tensor& x1,
                                         const torch::Tensor& positions, const torch::Tensor& logpThetaAt,
                                         const torch::Tensor& logpRefAt, const torch::Tensor& t) const
{
    const auto sequence = sequenceOfPosition(positions, xt.size(1));
    const auto values = perPosition(xt.reshape({-1}).index_select(0, positions),
                                    x1.reshape({-1}).index_select(0, positions), logpThetaAt, logpRefAt,
                                    rateFactor(t).index_select(0, sequence));
    return torch::zeros({xt.size(0)}, values.options()).index_add(0, sequence, values);
}

torch::Tensor UniformNoise::conditionalRate(const torch::Tensor& xt, const torch::Tensor& x1,
                                            const torch::Tensor& t) const
{
    const auto real = t.scalar_type();
    const auto corrupted = xt.ne(x1).to(real).unsqueeze(-1);                             // [B, D, 1]
    const auto target = torch::one_hot(x1, m_vocabSize).to(real);                        // [B, D, S]
    const auto offDiagonal = 1 - torch::one_hot(xt, m_vocabSize).to(real);               // [B, D, S]
    return corrupted * target * rateFactor(t).view({-1, 1, 1}) + (1 - corrupted) * offDiagonal * m_eta;
}

torch::Tensor UniformNoise::modelRate(const torch::Tensor& xt, const torch::Tensor& probs, const torch::Tensor& t) const
{
    const auto offDiagonal = 1 - torch::one_hot(xt, m_vocabSize).to(probs.scalar_type());   // [B, D, S]
    const auto pSelf = probs.gather(-1, xt.unsqueeze(-1));                                   // [B, D, 1]
    return (probs * rateFactor(t).view({-1, 1, 1}) + m_eta * pSelf) * offDiagonal;
}

} // namespace d2dpo
