// SPDX-License-Identifier: GPL-3.0-or-later
// A task owns everything specific to what the sequences are: its vocabulary (the only way tokens
// become text and back), its pretraining data, which sequences are valid, the metrics it declares
// and computes over a batch of samples, the histogram it shows, the rule that ranks two
// sequences (simulated experts, agreement statistics, rule-made pairs) and the hints beside a
// sequence. Its TaskConfig is the serialisable spec every checkpoint carries. The paper's task
// is binary-integers (binaryintegerstask.h); sequence files are sequencestask.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "base/choice.h"
#include "base/config.h"
#include "base/result.h"
#include "base/samplemetrics.h"
#include "base/sequencehint.h"
#include "tasks/rule.h"
#include "tasks/vocabulary.h"

namespace d2dpo {

class Task {
public:
    virtual ~Task() = default;

    /// The spec this task was made from, with its rule resolved.
    const TaskConfig& config() const { return m_config; }
    const std::string& name() const { return m_config.name; }
    /// The identity of its sequences (taskconfig.h): labels of one task key train another.
    std::string key() const { return taskKey(m_config); }
    /// Sequence length D (pads included).
    int64_t length() const { return m_config.length; }
    const Vocabulary& vocabulary() const { return m_vocabulary; }
    /// Real tokens S (the symbols and the pad; the mask token is S and is never clean data).
    int64_t vocabSize() const { return m_vocabulary.size(); }
    int64_t maskToken() const { return m_vocabulary.maskToken(); }
    /// The rule its metrics measure and its simulated expert labels with; null when it has none.
    const Rule* rule() const { return m_rule.get(); }

    /// `count` clean training sequences drawn from the data distribution -> [count, D] int64.
    virtual torch::Tensor sampleData(int64_t count, torch::Generator& generator, torch::Device device) const = 0;
    /// `count` rule-made pairs -> (winners, losers) [count, D] int64, each winner ranked above its
    /// loser by the rule; an error when the task has no rule or the rule ranks all data the same.
    virtual Result<std::pair<torch::Tensor, torch::Tensor>> rulePairs(int64_t count, torch::Generator& generator,
                                                                      torch::Device device) const = 0;

    /// Whether one sequence of length() tokens is well-formed for this task.
    virtual bool isValid(const int64_t* tokens) const = 0;
    /// Measures samples [B, D] (on any device): one copy to the host, then measureRows().
    SampleMetrics measure(const torch::Tensor& samples) const;
    /// Measures `count` rows of length() tokens, row-major.
    virtual SampleMetrics measureRows(const std::vector<int64_t>& rows, int64_t count) const = 0;
    /// The hint the Label view shows beside one sequence.
    virtual SequenceHint hint(const std::vector<int64_t>& tokens) const = 0;

    /// 0 for an invalid sequence, else 1 + the rule's score (1 without a rule).
    double rank(const int64_t* tokens) const;
    /// The rule's label for a pair as shown, from the texts: the higher rank wins, equal ranks tie.
    Result<Choice> ruleChoice(const std::string& left, const std::string& right) const;

    std::string format(const std::vector<int64_t>& sequence) const { return m_vocabulary.format(sequence); }
    /// format()'s text -> length() tokens; an error names the first symbol that is not a token
    /// of this task (a mask is never accepted) and its position, or the length.
    Result<std::vector<int64_t>> parse(const std::string& text) const { return m_vocabulary.parse(text, length()); }

protected:
    Task(TaskConfig config, Vocabulary vocabulary);
    /// The rule's text for a valid sequence (pads at the end left out).
    std::string ruleText(const int64_t* tokens) const;
    /// Adds the rule's metric to `metrics` from the ranks of the samples (rank() of each).
    void addRuleMetric(SampleMetrics& metrics, const std::string& name, double sum) const;

    TaskConfig m_config;
    Vocabulary m_vocabulary;
    std::unique_ptr<Rule> m_rule;
};

/// Builds the task a spec describes (validated; a rule the task does not know is refused).
Result<std::unique_ptr<Task>> makeTask(const TaskConfig& config);

/// Every task's rules, for people: "odd (binary-integers); motif:REGEX, ... (sequence files)".
std::string describeKnownRules();

/// The spec with another rule ("" keeps the spec's): what `--rule` does to a model's task.
TaskConfig withRule(TaskConfig config, const std::string& rule);

/// Each row of `sequences` [B, D] int64 (on any device) as text for people, with Task::format.
std::vector<std::string> formatRows(const Task& task, const torch::Tensor& sequences);

/// Rows [B, D] int64 on the host, row-major.
std::vector<int64_t> rowsToHost(const torch::Tensor& sequences);

} // namespace d2dpo
