// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/vocabularyframe.h"

#include <torch/torch.h>

namespace d2dpo {

namespace {

torch::Tensor idTensor(const std::vector<int64_t>& ids)
{
    return torch::tensor(ids, torch::kLong).view({1, int64_t(ids.size())});
}

} // namespace

VocabularyFrame::VocabularyFrame(const ModelVocabulary& vocabulary)
{
    auto tokenIds = vocabulary.realTokenIds();
    m_realIds = torch::tensor(tokenIds, torch::kLong);
    tokenIds.push_back(vocabulary.maskId);
    m_idOfToken = torch::tensor(tokenIds, torch::kLong);
    m_begin = idTensor(vocabulary.begin);
    m_end = idTensor(vocabulary.end);
}

torch::Tensor VocabularyFrame::modelIds(const torch::Tensor& tokens) const
{
    const int64_t rows = tokens.size(0);
    auto ids = m_idOfToken.index_select(0, tokens.reshape({-1})).view_as(tokens);
    if (before() == 0 && after() == 0)
        return ids;
    return torch::cat({m_begin.expand({rows, before()}), ids, m_end.expand({rows, after()})}, 1);
}

torch::Tensor VocabularyFrame::taskPositions(const torch::Tensor& perId, int64_t length) const
{
    return perId.narrow(1, before(), length);
}

void VocabularyFrame::to(torch::Device device)
{
    m_idOfToken = m_idOfToken.to(device);
    m_realIds = m_realIds.to(device);
    m_begin = m_begin.to(device);
    m_end = m_end.to(device);
}

} // namespace d2dpo
