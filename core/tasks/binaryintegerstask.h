// SPDX-License-Identifier: GPL-3.0-or-later
// The paper's task: integer i in 0..N encoded as N bits, the first i ones and the rest zeros.
// Pretraining data is uniform over i; the rule prefers valid odd over valid even over invalid.
#pragma once

#include "tasks/task.h"

namespace d2dpo {

class BinaryIntegersTask final : public Task {
public:
    explicit BinaryIntegersTask(int64_t length);

    std::string name() const override { return "binary-integers"; }
    int64_t length() const override { return m_length; }
    int64_t vocabSize() const override { return 2; }
    int64_t maxValue() const override { return m_length; }

    torch::Tensor sampleData(int64_t count, torch::Generator& generator, torch::Device device) const override;
    torch::Tensor decode(const torch::Tensor& sequences) const override;
    torch::Tensor ruleRank(const torch::Tensor& sequences) const override;
    std::pair<torch::Tensor, torch::Tensor> rulePairs(int64_t count, torch::Generator& generator,
                                                      torch::Device device) const override;

    /// values [B] int64 -> their encodings b_i [B, D] int64.
    torch::Tensor encode(const torch::Tensor& values) const;

private:
    int64_t m_length;
};

} // namespace d2dpo
