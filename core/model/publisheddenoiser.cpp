// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/publisheddenoiser.h"

#include <torch/torch.h>

namespace d2dpo {

PublishedDenoiser::PublishedDenoiser(const ModelVocabulary& vocabulary, int64_t length, std::string prefix)
    : SlottedDenoiser(length, int64_t(vocabulary.realTokenIds().size()))
    , m_vocabulary(vocabulary)
    , m_frame(m_vocabulary)
    , m_prefix(std::move(prefix))
{
}

void PublishedDenoiser::setParameterSlot(const std::string& name, const torch::Tensor& value)
{
    m_parameters[name] = value;
    bind();
}

void PublishedDenoiser::to(torch::Device device)
{
    torch::NoGradGuard noGrad;
    for (auto& item : m_parameters)
        item.value() = item.value().to(device).detach().requires_grad_(item.value().requires_grad());
    m_frame.to(device);
    bind();
}

void PublishedDenoiser::to(torch::ScalarType dtype)
{
    torch::NoGradGuard noGrad;
    for (auto& item : m_parameters)
        item.value() = item.value().to(dtype).detach().requires_grad_(item.value().requires_grad());
    bind();
}

std::shared_ptr<DenoiserModel> PublishedDenoiser::deepCopy() const
{
    std::shared_ptr<PublishedDenoiser> copy = emptyCopy();
    {
        torch::NoGradGuard noGrad;
        for (const auto& item : m_parameters)
            copy->m_parameters.insert(item.key(), item.value().clone().requires_grad_(item.value().requires_grad()));
    }
    copy->m_passengers = m_passengers; // never trained: shared
    copy->m_training = m_training;
    copy->m_frame.to(device());
    copy->bind();
    return copy;
}

} // namespace d2dpo
