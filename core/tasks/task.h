// SPDX-License-Identifier: GPL-3.0-or-later
// A task says what the sequences are: vocabulary, length, the pretraining data, which samples
// are valid and what value they decode to, and an optional rule that ranks sequences (for
// simulated experts and rule-made preference pairs). The paper's task is binary-integers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "base/config.h"
#include "base/result.h"

namespace d2dpo {

class Task {
public:
    virtual ~Task() = default;

    virtual std::string name() const = 0;
    /// Sequence length D.
    virtual int64_t length() const = 0;
    /// Number of real tokens S (the mask token is S and is never part of clean data).
    virtual int64_t vocabSize() const = 0;
    int64_t maskToken() const { return vocabSize(); }
    /// Largest decoded value; decoded values lie in 0..maxValue.
    virtual int64_t maxValue() const = 0;

    /// `count` clean training sequences drawn from the data distribution -> [count, D] int64.
    virtual torch::Tensor sampleData(int64_t count, torch::Generator& generator, torch::Device device) const = 0;
    /// sequences [B, D] int64 -> decoded value [B] int64, -1 where invalid.
    virtual torch::Tensor decode(const torch::Tensor& sequences) const = 0;
    /// sequences [B, D] -> rank [B] int64 under the task's preference rule (higher is better).
    virtual torch::Tensor ruleRank(const torch::Tensor& sequences) const = 0;
    /// `count` rule-made pairs -> (winners [count, D], losers [count, D]) int64.
    virtual std::pair<torch::Tensor, torch::Tensor> rulePairs(int64_t count, torch::Generator& generator,
                                                              torch::Device device) const = 0;

    /// One sequence as text for people ("0110", with '_' for a mask).
    virtual std::string format(const std::vector<int64_t>& sequence) const;
    /// Text as format() writes it -> tokens; an error names the first symbol that is not a token
    /// of this task (a mask is never accepted) and its position.
    virtual Result<std::vector<int64_t>> parse(const std::string& text) const;
};

Result<std::unique_ptr<Task>> makeTask(const TaskConfig& config);

/// Each row of `sequences` [B, D] int64 (on any device) as text for people, with Task::format.
std::vector<std::string> formatRows(const Task& task, const torch::Tensor& sequences);

} // namespace d2dpo
