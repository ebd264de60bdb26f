// SPDX-License-Identifier: GPL-3.0-or-later
#include "diffusion/eulersampler.h"

#include <algorithm>

#include <torch/torch.h>

namespace d2dpo {

EulerSampler::EulerSampler(Denoiser model, int64_t maskToken, int steps, double eta, Mode mode)
    : m_model(std::move(model))
    , m_maskToken(maskToken)
    , m_steps(steps)
    , m_eta(eta)
    , m_mode(mode)
{
}

std::string EulerSampler::describe() const { return "Euler, " + std::to_string(m_steps) + " steps"; }

double EulerSampler::unmaskProbability(double t, double dt, double eta)
{
    return std::min(1.0, dt * (1 + eta * t) / (1 - t));
}

torch::TensorOptions EulerSampler::realOptions(const torch::Tensor& like) const
{
    // The model's own floating type, so a double-precision model gets double times and noise.
    return torch::dtype(m_model->parameters().front().scalar_type()).device(like.device());
}

torch::Tensor EulerSampler::forward(const torch::Tensor& x, double t, const torch::Tensor& rows)
{
    const torch::Tensor input = rows.defined() ? x.index_select(0, rows) : x;
    samplerPass();
    ++m_counters.forwardPasses;
    m_counters.rowsForwarded += input.size(0);
    return m_model->forward(input, torch::full({input.size(0)}, t, realOptions(x)));
}

torch::Tensor EulerSampler::step(const torch::Tensor& x, double t, double dt, bool last, torch::Generator& generator)
{
    const auto options = realOptions(x);
    const auto masked = x.eq(m_maskToken);
    const auto logits = forward(x, t);

    // Gumbel-max draws one token per position from softmax(logits) with the seeded generator.
    const auto uniform = torch::rand(logits.sizes(), generator, options).clamp_(1e-20, 1.0 - 1e-7);
    const auto tokens = (logits - torch::log(-torch::log(uniform))).argmax(-1);

    // Forced on the last step: dt / (1 - t) may round to just below 1.
    const double pUnmask = last ? 1.0 : unmaskProbability(t, dt, m_eta);
    const auto unmask = masked & torch::rand(x.sizes(), generator, options).lt(pUnmask);
    auto next = torch::where(unmask, tokens, x);
    if (m_eta > 0 && !last) {
        const auto remask = masked.logical_not() & torch::rand(x.sizes(), generator, options).lt(m_eta * dt);
        next = torch::where(remask, torch::full_like(next, m_maskToken), next);
    }
    return next;
}

torch::Tensor EulerSampler::sampleWithoutRemasking(int64_t count, torch::Generator& generator)
{
    const auto device = m_model->parameters().front().device();
    const int64_t length = m_model->length();
    const int64_t vocab = m_model->vocabSize();
    auto x = torch::full({count, length}, m_maskToken, torch::dtype(torch::kLong).device(device));
    const auto options = realOptions(x);
    // Each position's unmask step (uniform over 0..K-1) and its Gumbel noise, drawn once.
    const auto unmaskStep = torch::randint(0, m_steps, {count, length}, generator, x.options());
    const auto gumbel =
        -torch::log(-torch::log(torch::rand({count, length, vocab}, generator, options).clamp_(1e-20, 1.0 - 1e-7)));
    // Steps at which anything happens, found with one host copy.
    const auto eventSteps = std::get<0>(torch::_unique(unmaskStep.flatten())).to(torch::kCPU);
    const double dt = 1.0 / m_steps;
    auto apply = [&](int64_t k, const torch::Tensor& logits, const torch::Tensor& rows) {
        const auto tokens = (logits + (rows.defined() ? gumbel.index_select(0, rows) : gumbel)).argmax(-1);
        const auto now = (rows.defined() ? unmaskStep.index_select(0, rows) : unmaskStep).eq(k);
        if (rows.defined())
            x.index_copy_(0, rows, torch::where(now, tokens, x.index_select(0, rows)));
        else
            x = torch::where(now, tokens, x);
    };
    if (m_mode == Mode::Reference) {
        for (int64_t k = 0; k < m_steps; ++k, ++m_counters.steps)
            apply(k, forward(x, k * dt), {});
        return x;
    }
    const int64_t* events = eventSteps.data_ptr<int64_t>();
    for (int64_t i = 0; i < eventSteps.numel(); ++i, ++m_counters.steps) {
        const int64_t k = events[i];
        const auto rows = unmaskStep.eq(k).any(1).nonzero().flatten();
        apply(k, forward(x, k * dt, rows), rows);
    }
    return x;
}

torch::Tensor EulerSampler::sampleWithRemasking(int64_t count, torch::Generator& generator)
{
    const auto device = m_model->parameters().front().device();
    auto x = torch::full({count, m_model->length()}, m_maskToken, torch::dtype(torch::kLong).device(device));
    const double dt = 1.0 / m_steps;
    const bool reuse = m_mode == Mode::Cached && !m_model->timeConditioned();
    if (!reuse) {
        for (int k = 0; k < m_steps; ++k, ++m_counters.steps)
            x = step(x, k * dt, dt, k == m_steps - 1, generator);
        return x;
    }
    // Time-independent denoiser: forward only the rows that changed since their last pass; the
    // random draws are exactly those of step(), so the samples are the same.
    const auto options = realOptions(x);
    torch::Tensor logits;
    torch::Tensor changed = torch::ones({count}, torch::dtype(torch::kBool).device(device));
    for (int k = 0; k < m_steps; ++k, ++m_counters.steps) {
        const bool last = k == m_steps - 1;
        const double t = k * dt;
        const auto rows = changed.nonzero().flatten();
        if (!logits.defined())
            logits = forward(x, t);
        else if (rows.numel() > 0)
            logits.index_copy_(0, rows, forward(x, t, rows));
        const auto masked = x.eq(m_maskToken);
        const auto uniform = torch::rand(logits.sizes(), generator, options).clamp_(1e-20, 1.0 - 1e-7);
        const auto tokens = (logits - torch::log(-torch::log(uniform))).argmax(-1);
        const double pUnmask = last ? 1.0 : unmaskProbability(t, dt, m_eta);
        auto next = torch::where(masked & torch::rand(x.sizes(), generator, options).lt(pUnmask), tokens, x);
        if (!last) {
            const auto remask = masked.logical_not() & torch::rand(x.sizes(), generator, options).lt(m_eta * dt);
            next = torch::where(remask, torch::full_like(next, m_maskToken), next);
        }
        changed = next.ne(x).any(1);
        x = next;
    }
    return x;
}

torch::Tensor EulerSampler::sampleBatch(int64_t count, torch::Generator& generator)
{
    return m_eta > 0 ? sampleWithRemasking(count, generator) : sampleWithoutRemasking(count, generator);
}

torch::Tensor EulerSampler::sample(int64_t count, torch::Generator& generator, int64_t batch)
{
    return sampleInBatches(count, batch, m_model->length(), m_model->parameters().front().device(),
                           [&](int64_t n) { return sampleBatch(n, generator); });
}

int64_t EulerSampler::passesPerBatch() const { return m_steps; }

} // namespace d2dpo
