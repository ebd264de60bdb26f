// SPDX-License-Identifier: GPL-3.0-or-later
#include "diffusion/exactsampler.h"

#include <algorithm>

#include <torch/torch.h>

namespace d2dpo {

ExactMaskingSampler::ExactMaskingSampler(Denoiser model, int64_t maskToken)
    : m_model(std::move(model))
    , m_maskToken(maskToken)
{
}

std::string ExactMaskingSampler::describe() const { return "exact, one position per pass"; }

std::pair<torch::Tensor, torch::Tensor> ExactMaskingSampler::unmaskSchedule(int64_t count, int64_t length,
                                                                           torch::Generator& generator,
                                                                           const torch::TensorOptions& realOptions)
{
    const auto times = torch::rand({count, length}, generator, realOptions);
    auto [sorted, order] = times.sort(1);
    return {order, sorted};
}

torch::Tensor ExactMaskingSampler::sampleBatch(int64_t count, torch::Generator& generator)
{
    const auto device = m_model->parameters().front().device();
    const auto real = torch::dtype(m_model->parameters().front().scalar_type()).device(device);
    const int64_t length = m_model->length();
    auto x = torch::full({count, length}, m_maskToken, torch::dtype(torch::kLong).device(device));
    const auto [order, times] = unmaskSchedule(count, length, generator, real);
    const auto rowStart = torch::arange(count, x.options()) * length;
    auto flat = x.view({-1});
    for (int64_t k = 0; k < length; ++k, ++m_counters.steps) {
        // Row i's k-th position, as ascending flat indices (the denoiser's forwardAt wants them so).
        const auto positions = rowStart + order.select(1, k);
        samplerPass();
        const auto logits = m_model->forwardAt(x, times.select(1, k).contiguous(), positions); // [count, S]
        ++m_counters.forwardPasses;
        m_counters.rowsForwarded += count;
        const auto uniform = torch::rand(logits.sizes(), generator, real).clamp_(1e-20, 1.0 - 1e-7);
        const auto tokens = (logits - torch::log(-torch::log(uniform))).argmax(-1);
        flat.index_put_({positions}, tokens);
    }
    return x;
}

torch::Tensor ExactMaskingSampler::sample(int64_t count, torch::Generator& generator, int64_t batch)
{
    return sampleInBatches(count, batch, m_model->length(), m_model->parameters().front().device(),
                           [&](int64_t n) { return sampleBatch(n, generator); });
}

int64_t ExactMaskingSampler::passesPerBatch() const { return m_model->length(); }

} // namespace d2dpo
