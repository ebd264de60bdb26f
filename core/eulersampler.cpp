#include "eulersampler.h"

#include <algorithm>

#include <torch/torch.h>

namespace d2dpo {

EulerSampler::EulerSampler(Denoiser model, int64_t maskToken, int steps, double eta)
    : m_model(std::move(model))
    , m_maskToken(maskToken)
    , m_steps(steps)
    , m_eta(eta)
{
}

double EulerSampler::unmaskProbability(double t, double dt, double eta)
{
    return std::min(1.0, dt * (1 + eta * t) / (1 - t));
}

torch::Tensor EulerSampler::step(const torch::Tensor& x, double t, double dt, bool last, torch::Generator& generator)
{
    const auto floatOptions = torch::dtype(torch::kFloat).device(x.device());
    const auto masked = x.eq(m_maskToken);
    const auto logits = m_model->forward(x, torch::full({x.size(0)}, t, floatOptions));
    ++m_counters.forwardPasses;

    // Gumbel-max draws one token per position from softmax(logits) with the seeded generator.
    const auto uniform = torch::rand(logits.sizes(), generator, floatOptions).clamp_(1e-20, 1.0 - 1e-7);
    const auto tokens = (logits - torch::log(-torch::log(uniform))).argmax(-1);

    // Forced on the last step: dt / (1 - t) may round to just below 1.
    const double pUnmask = last ? 1.0 : unmaskProbability(t, dt, m_eta);
    const auto unmask = masked & torch::rand(x.sizes(), generator, floatOptions).lt(pUnmask);
    auto next = torch::where(unmask, tokens, x);
    if (m_eta > 0 && !last) {
        const auto remask = masked.logical_not() & torch::rand(x.sizes(), generator, floatOptions).lt(m_eta * dt);
        next = torch::where(remask, torch::full_like(next, m_maskToken), next);
    }
    return next;
}

torch::Tensor EulerSampler::sampleBatch(int64_t count, torch::Generator& generator)
{
    const auto device = m_model->parameters().front().device();
    auto x = torch::full({count, m_model->options.length()}, m_maskToken, torch::dtype(torch::kLong).device(device));
    const double dt = 1.0 / m_steps;
    for (int k = 0; k < m_steps; ++k) {
        x = step(x, k * dt, dt, k == m_steps - 1, generator);
        ++m_counters.steps;
    }
    return x;
}

torch::Tensor EulerSampler::sample(int64_t count, torch::Generator& generator, int64_t batch)
{
    torch::InferenceMode inference;
    if (count <= 0)
        return torch::empty({0, m_model->options.length()}, torch::kLong);
    std::vector<torch::Tensor> parts;
    for (int64_t done = 0; done < count; done += batch)
        parts.push_back(sampleBatch(std::min(batch, count - done), generator));
    return torch::cat(parts, 0);
}

} // namespace d2dpo
