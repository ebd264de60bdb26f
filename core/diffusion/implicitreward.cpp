// SPDX-License-Identifier: GPL-3.0-or-later
#include "diffusion/implicitreward.h"

#include <algorithm>

#include <torch/torch.h>

#include "diffusion/dpoestimator.h"
#include "diffusion/losses.h"
#include "diffusion/sampler.h"

namespace d2dpo {

torch::Tensor implicitRewardMargins(Denoiser& policy, Denoiser& reference, const NoiseProcess& noise,
                                    const torch::Tensor& first, const torch::Tensor& second, const DpoConfig& dpo,
                                    const MarginEstimate& estimate, torch::Generator& generator)
{
    TORCH_CHECK(first.sizes() == second.sizes() && first.dim() == 2, "margins need two [P, D] batches alike");
    TORCH_CHECK(estimate.draws >= 1 && estimate.rows >= 1, "margins need at least one draw and one row a pass");
    torch::NoGradGuard noGrad;
    // The loss's estimator with many draws: complementary masks cut the variance of each draw;
    // averaging the draws is the expectation the reward is.
    DpoConfig config = dpo;
    config.tSamplesPerPair = estimate.draws;
    config.vrpoSamples = 1;
    config.tSampling = "independent";
    config.maskCoupling = "complementary";
    const int64_t count = first.size(0);
    const int64_t pairsPerPass = std::max<int64_t>(1, estimate.rows / (4 * int64_t(estimate.draws)));
    std::vector<torch::Tensor> parts;
    for (int64_t begin = 0; begin < count; begin += pairsPerPass) {
        samplerPass(); // a stop is heard between passes (diffusion/sampler.h's PassWatch)
        const int64_t end = std::min(count, begin + pairsPerPass);
        const auto a = first.slice(0, begin, end);
        const auto b = second.slice(0, begin, end);
        const CorruptedPairs pairs = corruptPairs(noise, a, b, config, generator);
        const SequenceDivergences rows = pairs.xt.is_cpu()
                                             ? divergencesAtPositions(policy, reference, noise, pairs.x1, pairs.xt, pairs.t)
                                             : divergencesAllPositions(policy, reference, noise, pairs.x1, pairs.xt, pairs.t);
        const DpoTerms terms = dpoTermsFrom(pairs, rows, end - begin, config);
        const auto margin = (terms.divergenceChosen - terms.divergenceRejected).view({estimate.draws, end - begin});
        parts.push_back(config.beta * margin.mean(0).to(torch::kCPU, torch::kDouble));
        if (estimate.progress)
            estimate.progress(end, count);
    }
    return parts.empty() ? torch::zeros({0}, torch::kDouble) : torch::cat(parts);
}

} // namespace d2dpo
