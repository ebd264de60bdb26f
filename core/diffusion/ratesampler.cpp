// SPDX-License-Identifier: GPL-3.0-or-later
#include "diffusion/ratesampler.h"

#include <algorithm>

#include <torch/torch.h>

namespace d2dpo {

namespace {

/// One draw per row of non-negative `weights` [..., V] in proportion to them, by inverse CDF with
/// the seeded generator: the index of the first cumulative weight above u ~ U[0, total). A weight
/// of zero is never drawn; an all-zero row gives an index the caller must not use.
torch::Tensor drawProportional(const torch::Tensor& weights, torch::Generator& generator)
{
    const auto cumulative = weights.cumsum(-1);
    const auto total = cumulative.select(-1, -1);
    const auto u = torch::rand(total.sizes(), generator, total.options()) * total;
    // u can round up to the total itself: clamp so that the index stays a state.
    return cumulative.le(u.unsqueeze(-1)).sum(-1).clamp_max(weights.size(-1) - 1);
}

} // namespace

RateEulerSampler::RateEulerSampler(Denoiser model, std::shared_ptr<const NoiseProcess> noise, int steps)
    : m_model(std::move(model))
    , m_noise(std::move(noise))
    , m_steps(steps)
{
    TORCH_CHECK(m_steps >= 1, "RateEulerSampler needs at least one step");
    TORCH_CHECK(m_model->vocabSize() == m_noise->vocabSize(), "the denoiser predicts ",
                m_model->vocabSize(), " tokens, the noise process has ", m_noise->vocabSize());
}

std::string RateEulerSampler::describe() const { return "Euler on the rates, " + std::to_string(m_steps) + " steps"; }

torch::Tensor RateEulerSampler::step(const torch::Tensor& x, double t, double dt, bool last,
                                     torch::Generator& generator)
{
    // The model's own floating type, so a double-precision model gets double times and rates.
    const auto real = torch::dtype(m_model->parameters().front().scalar_type()).device(x.device());
    samplerPass();
    ++m_counters.forwardPasses;
    m_counters.rowsForwarded += x.size(0);
    const auto times = torch::full({x.size(0)}, t, real);
    const auto probs = torch::softmax(m_model->forward(x, times), -1);                   // [B, D, S]

    if (last) {
        const auto drawn = drawProportional(probs, generator);
        if (m_noise->stateCount() == m_noise->vocabSize())
            return drawn;
        return torch::where(x.ge(m_noise->vocabSize()), drawn, x); // see the header: real tokens stay
    }
    // The diagonal carries no rate (a process may leave anything there); zeroed, it is never drawn.
    const auto rates = m_noise->modelRate(x, probs, times).scatter(-1, x.unsqueeze(-1), 0.0); // [B, D, V]
    const auto total = rates.sum(-1);
    // rand < dt * total is a jump with probability min(1, dt * total).
    const auto jump = torch::rand(x.sizes(), generator, rates.options()).lt(total * dt);
    return torch::where(jump, drawProportional(rates, generator), x);
}

torch::Tensor RateEulerSampler::sampleBatch(int64_t count, torch::Generator& generator)
{
    const auto device = m_model->parameters().front().device();
    auto x = m_noise->prior(count, m_model->length(), device, generator);
    const double dt = 1.0 / m_steps;
    for (int k = 0; k < m_steps; ++k, ++m_counters.steps)
        x = step(x, k * dt, dt, k == m_steps - 1, generator);
    return x;
}

torch::Tensor RateEulerSampler::sample(int64_t count, torch::Generator& generator, int64_t batch)
{
    return sampleInBatches(count, batch, m_model->length(), m_model->parameters().front().device(),
                           [&](int64_t n) { return sampleBatch(n, generator); });
}

int64_t RateEulerSampler::passesPerBatch() const { return m_steps; }

} // namespace d2dpo
