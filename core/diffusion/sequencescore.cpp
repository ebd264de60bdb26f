// SPDX-License-Identifier: GPL-3.0-or-later
#include "diffusion/sequencescore.h"

#include <algorithm>

#include <torch/torch.h>

#include "diffusion/sampler.h"
#include "model/flatpositions.h"

namespace d2dpo {

torch::Tensor elboScores(Denoiser& model, const NoiseProcess& noise, const torch::Tensor& x1, int draws, int64_t rows,
                         torch::Generator& generator)
{
    TORCH_CHECK(x1.dim() == 2, "the bound scores a [N, D] batch");
    TORCH_CHECK(draws >= 1 && rows >= 1, "the bound needs at least one draw and one row a pass");
    TORCH_CHECK(noise.name() == "masking", "the likelihood bound is written for masking noise; this model's noise is ",
                noise.name());
    torch::NoGradGuard noGrad;
    const int64_t count = x1.size(0), length = x1.size(1);
    const auto floatOptions = torch::dtype(torch::kFloat).device(x1.device());
    const int64_t perPass = std::max<int64_t>(1, rows / draws);
    std::vector<torch::Tensor> parts;
    for (int64_t begin = 0; begin < count; begin += perPass) {
        samplerPass(); // a stop is heard between passes
        const int64_t end = std::min(count, begin + perPass), n = end - begin;
        const auto x = x1.slice(0, begin, end).repeat_interleave(draws, 0); // [n * draws, D]
        // One time per stratum [k/K, (k+1)/K): the draws cover t evenly, which cuts the variance
        // the 1/(1 - t) weight gives near t = 1. The clamp keeps that weight finite.
        const auto stratum = torch::arange(draws, floatOptions).repeat({n});
        const auto t = ((stratum + torch::rand({n * draws}, generator, floatOptions)) / double(draws)).clamp_max(1 - 1e-3);
        const auto xt = noise.corrupt(x, t, generator);
        const auto positions = noise.positionsRead(xt);
        if (positions.numel() == 0) { // nothing masked in this pass (short sequences, few draws)
            parts.push_back(torch::zeros({n}, torch::kDouble));
            continue;
        }
        const auto nll = torch::nn::functional::cross_entropy(
            model->forwardAt(xt, t, positions).to(torch::kFloat), x.reshape({-1}).index_select(0, positions),
            torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
        const auto row = sequenceOfPosition(positions, length);
        const auto weighted = nll / (1 - t).index_select(0, row);
        const auto perRow = torch::zeros({n * draws}, floatOptions).index_add_(0, row, weighted);
        parts.push_back(-perRow.view({n, draws}).to(torch::kDouble).mean(1).cpu());
    }
    return parts.empty() ? torch::zeros({0}, torch::kDouble) : torch::cat(parts);
}

} // namespace d2dpo
