// SPDX-License-Identifier: GPL-3.0-or-later
#include "tasks/task.h"

#include "tasks/binaryintegerstask.h"
#include "tasks/sequencestask.h"

#include <torch/torch.h>

namespace d2dpo {

Task::Task(TaskConfig config, Vocabulary vocabulary)
    : m_config(std::move(config))
    , m_vocabulary(std::move(vocabulary))
{
}

std::string Task::ruleText(const int64_t* tokens) const { return m_vocabulary.format(tokens, length()); }

double Task::rank(const int64_t* tokens) const
{
    if (!isValid(tokens))
        return 0;
    return 1 + (m_rule ? m_rule->score(ruleText(tokens)) : 0.0);
}

Result<Choice> Task::ruleChoice(const std::string& left, const std::string& right) const
{
    if (!m_rule)
        return makeError("the " + name() + " task has no rule to label with; name one with --rule");
    auto l = parse(left);
    if (!l)
        return makeError(l.error());
    auto r = parse(right);
    if (!r)
        return makeError(r.error());
    const double a = rank(l->data());
    const double b = rank(r->data());
    return a > b ? Choice::Left : (b > a ? Choice::Right : Choice::Tie);
}

void Task::addRuleMetric(SampleMetrics& metrics, const std::string& name, double sum) const
{
    if (!m_rule)
        return;
    metrics.ruleMetric = name;
    const std::string text = m_rule->binary()
                                 ? "share of all samples that are valid and preferred by the rule (" +
                                       m_rule->describe() + ")"
                                 : "mean rule score over all samples, invalid ones counting 0 (" +
                                       m_rule->describe() + ")";
    metrics.set(name, metrics.samples ? sum / double(metrics.samples) : 0.0, text, true);
}

SampleMetrics Task::measure(const torch::Tensor& samples) const
{
    return measureRows(rowsToHost(samples), samples.size(0));
}

Result<std::unique_ptr<Task>> makeTask(const TaskConfig& config)
{
    if (Status s = validate(config); !s)
        return makeError(s.error());
    if (config.name == "binary-integers")
        return BinaryIntegersTask::make(config);
    return SequencesTask::make(config);
}

std::string describeKnownRules()
{
    return "odd (binary-integers); motif:REGEX, composition:SYMBOLS or in-data (sequence files)";
}

TaskConfig withRule(TaskConfig config, const std::string& rule)
{
    if (!rule.empty())
        config.rule = rule;
    return config;
}

std::vector<int64_t> rowsToHost(const torch::Tensor& sequences)
{
    const torch::Tensor rows = sequences.to(torch::kCPU, torch::kLong).contiguous();
    return {rows.data_ptr<int64_t>(), rows.data_ptr<int64_t>() + rows.numel()};
}

std::vector<std::string> formatRows(const Task& task, const torch::Tensor& sequences)
{
    const std::vector<int64_t> rows = rowsToHost(sequences);
    const int64_t count = sequences.size(0);
    const int64_t length = sequences.size(1);
    std::vector<std::string> texts;
    texts.reserve(size_t(count));
    for (int64_t i = 0; i < count; ++i)
        texts.push_back(task.vocabulary().format(rows.data() + i * length, length));
    return texts;
}

} // namespace d2dpo
