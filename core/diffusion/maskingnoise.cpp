// SPDX-License-Identifier: GPL-3.0-or-later
#include "diffusion/maskingnoise.h"

#include <torch/torch.h>

#include "model/flatpositions.h"

namespace d2dpo {

MaskingNoise::MaskingNoise(int64_t vocabSize, double eta) : m_vocabSize(vocabSize), m_eta(eta) {}

torch::Tensor MaskingNoise::corruptWhere(const torch::Tensor& x1, const torch::Tensor& select,
                                         torch::Generator&) const
{
    return torch::where(select, torch::full_like(x1, maskToken()), x1);
}

torch::Tensor MaskingNoise::prior(int64_t count, int64_t length, torch::Device device, torch::Generator&) const
{
    return torch::full({count, length}, maskToken(), torch::dtype(torch::kLong).device(device));
}

torch::Tensor MaskingNoise::rateFactor(const torch::Tensor& t) const { return (1 + m_eta * t) / (1 - t); }

torch::Tensor MaskingNoise::divergence(const torch::Tensor& xt, const torch::Tensor& x1, const torch::Tensor& logpTheta,
                                       const torch::Tensor& logpRef, const torch::Tensor& t) const
{
    const auto index = x1.unsqueeze(-1);
    const auto logRatio = (logpTheta.gather(-1, index) - logpRef.gather(-1, index)).squeeze(-1); // [B, D]
    const auto masked = xt.eq(maskToken()).to(logRatio.scalar_type());
    return rateFactor(t) * (masked * logRatio).sum(1);
}

torch::Tensor MaskingNoise::positionsRead(const torch::Tensor& xt) const
{
    return xt.reshape({-1}).eq(maskToken()).nonzero().squeeze(1);
}

torch::Tensor MaskingNoise::divergenceAt(const torch::Tensor& xt, const torch::Tensor& x1,
                                         const torch::Tensor& positions, const torch::Tensor& logpThetaAt,
                                         const torch::Tensor& logpRefAt, const torch::Tensor& t) const
{
    const auto index = x1.reshape({-1}).index_select(0, positions).unsqueeze(1);
    const auto logRatio = (logpThetaAt.gather(1, index) - logpRefAt.gather(1, index)).squeeze(1); // [P]
    const auto perSequence = torch::zeros({xt.size(0)}, logRatio.options())
                                 .index_add(0, sequenceOfPosition(positions, xt.size(1)), logRatio);
    return rateFactor(t) * perSequence;
}

torch::Tensor MaskingNoise::conditionalRate(const torch::Tensor& xt, const torch::Tensor& x1,
                                            const torch::Tensor& t) const
{
    // With remasking the conditional process is Campbell et al.'s eta-augmented one: a mask jumps
    // to x_1 at rate (1 + eta t)/(1 - t) and a clean token falls back to M at rate eta. Without the
    // (1 + eta t) here the general form would not reduce to the paper's closed form.
    const auto masked = xt.eq(maskToken()).to(t.scalar_type()).unsqueeze(-1);           // [B, D, 1]
    const auto target = torch::one_hot(x1, vocabSize()).to(t.scalar_type());            // [B, D, S]
    const auto toReal = masked * target * rateFactor(t).view({-1, 1, 1});
    const auto toMask = (1 - masked) * m_eta;                                            // [B, D, 1]
    return torch::cat({toReal, toMask}, -1);
}

torch::Tensor MaskingNoise::modelRate(const torch::Tensor& xt, const torch::Tensor& probs, const torch::Tensor& t) const
{
    const auto masked = xt.eq(maskToken()).to(probs.scalar_type()).unsqueeze(-1);        // [B, D, 1]
    const auto toReal = masked * probs * rateFactor(t).view({-1, 1, 1});                 // [B, D, S]
    const auto toMask = (1 - masked) * m_eta;                                            // [B, D, 1]
    return torch::cat({toReal, toMask}, -1);
}

} // namespace d2dpo
