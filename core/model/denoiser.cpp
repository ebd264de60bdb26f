// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/denoiser.h"

#include <torch/torch.h>

#include "model/flatpositions.h"

namespace d2dpo {

torch::Tensor DenoiserModel::forwardAt(const torch::Tensor& tokens, const torch::Tensor& t, const torch::Tensor& positions)
{
    const int64_t length = tokens.size(1);
    const auto [rows, rowOfPosition, counts] =
        torch::unique_consecutive(sequenceOfPosition(positions, length), /*return_inverse=*/true);
    const auto within = rowOfPosition * length + positions.remainder(length);
    const auto logits = forward(tokens.index_select(0, rows), t.index_select(0, rows));
    return logits.reshape({-1, logits.size(-1)}).index_select(0, within);
}

void DenoiserModel::zero_grad()
{
    for (auto& p : parameters())
        if (p.grad().defined())
            p.mutable_grad().zero_();
}

Denoiser frozenCopy(const Denoiser& model)
{
    Denoiser copy = model->deepCopy();
    for (auto& parameter : copy->parameters())
        parameter.set_requires_grad(false);
    copy->eval();
    return copy;
}

int64_t parameterCount(const Denoiser& model)
{
    int64_t count = 0;
    for (const auto& p : model->parameters())
        count += p.numel();
    return count;
}

void dropGradients(const Denoiser& model)
{
    for (auto& p : model->parameters())
        p.mutable_grad().reset();
}

bool allFinite(const Denoiser& model)
{
    torch::NoGradGuard noGrad;
    for (const auto& p : model->parameters())
        if (!torch::isfinite(p).all().item<bool>())
            return false;
    return true;
}

} // namespace d2dpo
