// SPDX-License-Identifier: GPL-3.0-or-later
// The task's tokens as a model brought in sees them (base/modelvocabulary.h's contract): each task
// sequence of D tokens becomes begin + D of the model's ids + end, and the task's logits are the
// model's at the D positions over the ids of the task's real tokens alone (their softmax is the
// denoiser's distribution: MDLM's substitution parameterisation). Shared by every model brought
// in, whatever runs it (TorchScript, or a published checkpoint run natively).
#pragma once

#include <torch/types.h>

#include "base/modelvocabulary.h"

namespace d2dpo {

class VocabularyFrame {
public:
    explicit VocabularyFrame(const ModelVocabulary& vocabulary);

    /// Task tokens [B, D] (mask = S) -> the model's ids [B, before() + D + after()].
    torch::Tensor modelIds(const torch::Tensor& tokens) const;
    /// The model's logits [B, L, V] (or [B, L, ...] of any last size) -> the D task positions
    /// [B, D, ...]; then `realColumns` picks the real tokens' ids in the last dimension.
    torch::Tensor taskPositions(const torch::Tensor& perId, int64_t length) const;
    /// [..., V] -> [..., S]: the real tokens' ids.
    torch::Tensor realColumns(const torch::Tensor& logits) const { return logits.index_select(-1, m_realIds); }

    int64_t before() const { return m_begin.size(1); }
    int64_t after() const { return m_end.size(1); }
    const torch::Tensor& realIds() const { return m_realIds; }
    void to(torch::Device device);

private:
    torch::Tensor m_idOfToken; ///< [S + 1]: the model's id of each task token, the mask last
    torch::Tensor m_realIds;   ///< [S]: the ids whose logits are the task's
    torch::Tensor m_begin;     ///< [1, frame before]
    torch::Tensor m_end;       ///< [1, frame after]
};

} // namespace d2dpo
