// SPDX-License-Identifier: GPL-3.0-or-later
// A task over sequences a user brings (a FASTA or line file, read by sequencefile.h): the
// vocabulary from its spec, pads after shorter sequences, pretraining data drawn uniformly from
// the training sequences (duplicates weigh more). Valid: vocabulary symbols only, pads only at
// the end, a length within the data's range and, with validity "in-data", one of the training
// sequences. Metrics: the valid share, the rule's share, the novel share (valid and not in the
// data), the unique share; the histogram is over length. Rules: sequencerules.cpp.
// A task may have no training sequences (a model imported without a data file: its config has
// neither data nor a key): it checks symbols and lengths, has no in-data metrics, and refuses
// pretraining and rule-made pairs with a message that says why.
#pragma once

#include <unordered_set>

#include "tasks/task.h"

namespace d2dpo {

class SequencesTask final : public Task {
public:
    static Result<std::unique_ptr<Task>> make(const TaskConfig& config);

    torch::Tensor sampleData(int64_t count, torch::Generator& generator, torch::Device device) const override;
    Result<std::pair<torch::Tensor, torch::Tensor>> rulePairs(int64_t count, torch::Generator& generator,
                                                              torch::Device device) const override;
    bool isValid(const int64_t* tokens) const override;
    SampleMetrics measureRows(const std::vector<int64_t>& rows, int64_t count) const override;
    SequenceHint hint(const std::vector<int64_t>& tokens) const override;

private:
    SequencesTask(TaskConfig config, Vocabulary vocabulary);
    /// Pairs of a training sequence over itself with one symbol changed (for rules that rank all
    /// training sequences alike, as in-data does).
    Result<std::pair<torch::Tensor, torch::Tensor>> mutantPairs(int64_t count, torch::Generator& generator,
                                                                torch::Device device) const;
    /// Why one sequence is invalid, or "" when it is valid.
    std::string whyInvalid(const int64_t* tokens) const;
    bool hasData() const { return m_data.defined() && m_data.size(0) > 0; }

    std::unordered_set<std::string> m_dataSet; ///< the distinct training sequences
    torch::Tensor m_data;                      ///< [n, D] int64 on the CPU, duplicates kept
};

} // namespace d2dpo
