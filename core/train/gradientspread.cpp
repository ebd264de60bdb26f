// SPDX-License-Identifier: GPL-3.0-or-later
#include "train/gradientspread.h"

#include <torch/torch.h>

#include "diffusion/dpoestimator.h"
#include "model/device.h"

namespace d2dpo {

GradientSpread gradientSpread(Denoiser& policy, Denoiser& reference, const NoiseProcess& noise,
                              const torch::Tensor& winners, const torch::Tensor& losers, const DpoConfig& config,
                              int draws, uint64_t seed)
{
    const auto device = policy->parameters().front().device();
    auto pick = makeGenerator(seed, device);
    const auto index = torch::randint(0, winners.size(0), {config.batch}, pick, torch::dtype(torch::kLong).device(device));
    const auto w = winners.index_select(0, index);
    const auto l = losers.index_select(0, index);
    std::vector<torch::Tensor> parameters;
    for (const auto& p : policy->parameters())
        if (p.requires_grad())
            parameters.push_back(p);
    std::vector<torch::Tensor> gradients;
    for (int i = 0; i < draws; ++i) {
        auto generator = makeGenerator(seed + 1 + uint64_t(i), device);
        const DpoTerms terms = d2dpoLoss(policy, reference, noise, w, l, config, generator);
        std::vector<torch::Tensor> flat;
        for (const auto& g : torch::autograd::grad({terms.loss}, parameters, {}, false, false, true))
            flat.push_back(g.defined() ? g.reshape({-1}) : torch::Tensor());
        for (size_t k = 0; k < flat.size(); ++k)
            if (!flat[k].defined())
                flat[k] = torch::zeros({parameters[k].numel()}, parameters[k].options());
        gradients.push_back(torch::cat(flat).to(torch::kDouble));
    }
    const auto g = torch::stack(gradients);  // [draws, P]
    const auto mean = g.mean(0);
    GradientSpread spread;
    spread.std = std::sqrt((g - mean).pow(2).sum(1).mean().item<double>());
    spread.meanNorm = mean.norm().item<double>();
    return spread;
}

} // namespace d2dpo
