// SPDX-License-Identifier: GPL-3.0-or-later
// The paper's task: integer i in 0..N encoded as N bits, the first i ones and the rest zeros.
// Pretraining data is uniform over i; its one rule, "odd", prefers valid odd over valid even
// over invalid. Metrics: VSR, odd ratio, odd share of the valid samples, TV from uniform over
// the odd integers and entropy; the histogram is over i.
#pragma once

#include "tasks/task.h"

namespace d2dpo {

class BinaryIntegersTask final : public Task {
public:
    static Result<std::unique_ptr<Task>> make(const TaskConfig& config);
    explicit BinaryIntegersTask(int64_t length);

    torch::Tensor sampleData(int64_t count, torch::Generator& generator, torch::Device device) const override;
    Result<std::pair<torch::Tensor, torch::Tensor>> rulePairs(int64_t count, torch::Generator& generator,
                                                              torch::Device device) const override;
    bool isValid(const int64_t* tokens) const override { return decode(tokens) >= 0; }
    SampleMetrics measureRows(const std::vector<int64_t>& rows, int64_t count) const override;
    SequenceHint hint(const std::vector<int64_t>& tokens) const override;

    /// values [B] int64 -> their encodings b_i [B, D] int64.
    torch::Tensor encode(const torch::Tensor& values) const;
    /// One sequence -> the i it encodes, or -1 when it is invalid.
    int64_t decode(const int64_t* tokens) const;
};

} // namespace d2dpo
