// SPDX-License-Identifier: GPL-3.0-or-later
#include "diffusion/confidentsampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <torch/torch.h>

namespace d2dpo {

ConfidentSampler::ConfidentSampler(Denoiser model, int64_t maskToken, int passes)
    : m_model(std::move(model))
    , m_maskToken(maskToken)
    , m_passes(std::max<int>(1, int(std::min<int64_t>(passes, m_model->length()))))
{
}

std::string ConfidentSampler::describe() const
{
    return "confident, " + std::to_string(m_passes) + " passes";
}

int64_t ConfidentSampler::positionsInPass(int64_t pass, int64_t passes, int64_t length)
{
    auto doneAfter = [&](int64_t j) { return int64_t(std::llround(double(j) * double(length) / double(passes))); };
    return doneAfter(pass + 1) - doneAfter(pass);
}

torch::Tensor ConfidentSampler::sampleBatch(int64_t count, torch::Generator& generator)
{
    const auto device = m_model->parameters().front().device();
    const auto real = torch::dtype(m_model->parameters().front().scalar_type()).device(device);
    const int64_t length = m_model->length();
    auto x = torch::full({count, length}, m_maskToken, torch::dtype(torch::kLong).device(device));
    const double minusInfinity = -std::numeric_limits<double>::infinity();
    int64_t unmasked = 0;
    for (int64_t pass = 0; pass < m_passes; ++pass, ++m_counters.steps) {
        const int64_t keep = positionsInPass(pass, m_passes, length);
        if (keep == 0)
            continue;
        const double t = double(unmasked) / double(length);
        samplerPass();
        const auto logits = m_model->forward(x, torch::full({count}, t, real)); // [count, D, S]
        ++m_counters.forwardPasses;
        m_counters.rowsForwarded += count;
        const auto uniform = torch::rand(logits.sizes(), generator, real).clamp_(1e-20, 1.0 - 1e-7);
        const auto tokens = (logits - torch::log(-torch::log(uniform))).argmax(-1, /*keepdim=*/true); // [count, D, 1]
        auto sureness = logits.log_softmax(-1).gather(-1, tokens).squeeze(-1);                       // [count, D]
        const auto choiceNoise = torch::rand(sureness.sizes(), generator, real).clamp_(1e-20, 1.0 - 1e-7);
        sureness = sureness - (1.0 - t) * torch::log(-torch::log(choiceNoise));
        sureness.masked_fill_(x.ne(m_maskToken), minusInfinity);
        const auto chosen = std::get<1>(sureness.topk(keep, /*dim=*/1)); // [count, keep]
        x.scatter_(1, chosen, tokens.squeeze(-1).gather(1, chosen));
        unmasked += keep;
    }
    return x;
}

torch::Tensor ConfidentSampler::sample(int64_t count, torch::Generator& generator, int64_t batch)
{
    return sampleInBatches(count, batch, m_model->length(), m_model->parameters().front().device(),
                           [&](int64_t n) { return sampleBatch(n, generator); });
}

int64_t ConfidentSampler::passesPerBatch() const { return m_passes; }

} // namespace d2dpo
