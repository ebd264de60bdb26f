// SPDX-License-Identifier: GPL-3.0-or-later
#include "tasks/sequencestask.h"

#include <stdexcept>

#include <torch/torch.h>

namespace d2dpo {

Result<std::unique_ptr<Task>> SequencesTask::make(const TaskConfig& config)
{
    if (config.data.empty() && !config.key.empty()) // the store's copy of a task keeps only its key
        return makeError("the task's training sequences are missing (a model record without its checkpoint?)");
    if (config.data.empty() && config.validity == "in-data")
        return makeError("'one of the training sequences' (validity in-data) needs the training sequences; "
                         "this task has none");
    if (config.data.empty() && config.rule == "in-data")
        return makeError("the in-data rule ranks by the training sequences; this task has none");
    Vocabulary vocabulary(config.symbols, config.padded);
    std::unique_ptr<SequencesTask> task(new SequencesTask(config, vocabulary));
    task->m_dataSet.insert(config.data.begin(), config.data.end());
    std::vector<int64_t> flat;
    flat.reserve(config.data.size() * size_t(config.length));
    for (size_t i = 0; i < config.data.size(); ++i) {
        auto tokens = vocabulary.parse(config.data[i], config.length);
        if (!tokens)
            return makeError("training sequence " + std::to_string(i + 1) + ": " + tokens.error());
        if (const std::string why = task->whyInvalid(tokens->data()); !why.empty())
            return makeError("training sequence " + std::to_string(i + 1) + " is not valid for its own task: " + why);
        flat.insert(flat.end(), tokens->begin(), tokens->end());
    }
    task->m_data = torch::tensor(flat, torch::kLong).view({int64_t(config.data.size()), int64_t(config.length)});
    if (!config.rule.empty()) {
        auto rule = makeSequenceRule(config.rule, config.symbols, task->m_dataSet);
        if (!rule)
            return makeError(rule.error());
        task->m_rule = std::move(rule.value());
    }
    return std::unique_ptr<Task>(std::move(task));
}

SequencesTask::SequencesTask(TaskConfig config, Vocabulary vocabulary) : Task(std::move(config), std::move(vocabulary))
{
}

std::string SequencesTask::whyInvalid(const int64_t* tokens) const
{
    const int64_t symbols = int64_t(m_config.symbols.size());
    const int64_t pad = m_vocabulary.padToken();
    int64_t end = length();
    while (pad >= 0 && end > 0 && tokens[end - 1] == pad)
        --end;
    for (int64_t i = 0; i < end; ++i)
        if (tokens[i] < 0 || tokens[i] >= symbols)
            return tokens[i] == pad ? "it ends, then goes on (an end mark before its last symbol)"
                                    : "a token outside the vocabulary";
    if (end < m_config.minLength || end > length())
        return "length " + std::to_string(end) + " outside " + std::to_string(m_config.minLength) + ".." +
               std::to_string(length());
    if (m_config.validity == "in-data" && !m_dataSet.count(m_vocabulary.format(tokens, length())))
        return "not one of the training sequences";
    return {};
}

bool SequencesTask::isValid(const int64_t* tokens) const { return whyInvalid(tokens).empty(); }

torch::Tensor SequencesTask::sampleData(int64_t count, torch::Generator& generator, torch::Device device) const
{
    if (!hasData())
        throw std::runtime_error("this task has no training sequences to draw from (its model was imported "
                                 "without a data file)");
    const auto rows = torch::randint(0, m_data.size(0), {count}, generator, torch::dtype(torch::kLong).device(device));
    return m_data.index_select(0, rows.to(torch::kCPU)).to(device);
}

Result<std::pair<torch::Tensor, torch::Tensor>> SequencesTask::rulePairs(int64_t count, torch::Generator& generator,
                                                                         torch::Device device) const
{
    if (!m_rule)
        return makeError("rule-made pairs need a rule; name one with --rule (motif:REGEX, composition:SYMBOLS, in-data)");
    if (!hasData())
        return makeError("rule-made pairs are drawn from the training sequences, and this task has none (its model "
                         "was imported without a data file): label sampled pairs instead");
    // Rank each training sequence once, then pair uniformly drawn ones whose ranks differ.
    const int64_t n = m_data.size(0);
    std::vector<double> ranks(static_cast<size_t>(n));
    const int64_t* data = m_data.data_ptr<int64_t>();
    bool allEqual = true;
    for (int64_t i = 0; i < n; ++i) {
        ranks[size_t(i)] = rank(data + i * length());
        allEqual = allEqual && ranks[size_t(i)] == ranks[0];
    }
    if (allEqual)
        return mutantPairs(count, generator, device);
    std::vector<int64_t> winners, losers;
    winners.reserve(size_t(count));
    losers.reserve(size_t(count));
    for (int round = 0; int64_t(winners.size()) < count; ++round) {
        if (round == 10'000)
            return makeError("the rule " + m_rule->spec() + " separates too few training sequences to make " +
                             std::to_string(count) + " pairs");
        const int64_t draw = 2 * std::max<int64_t>(count - int64_t(winners.size()), 1024);
        const auto picks = torch::randint(0, n, {draw}, generator, torch::dtype(torch::kLong).device(device))
                               .to(torch::kCPU).contiguous();
        const int64_t* p = picks.data_ptr<int64_t>();
        for (int64_t i = 0; i + 1 < draw && int64_t(winners.size()) < count; i += 2) {
            const double a = ranks[size_t(p[i])], b = ranks[size_t(p[i + 1])];
            if (a == b)
                continue;
            winners.push_back(a > b ? p[i] : p[i + 1]);
            losers.push_back(a > b ? p[i + 1] : p[i]);
        }
    }
    const auto take = [&](const std::vector<int64_t>& rows) {
        return m_data.index_select(0, torch::tensor(rows, torch::kLong)).to(device);
    };
    return std::pair{take(winners), take(losers)};
}

Result<std::pair<torch::Tensor, torch::Tensor>> SequencesTask::mutantPairs(int64_t count, torch::Generator& generator,
                                                                           torch::Device device) const
{
    // The rule ranks all training sequences alike (in-data does): each winner is a training
    // sequence, its loser the same with one symbol changed, kept when the rule ranks it lower.
    const int64_t n = m_data.size(0), d = length();
    const int64_t symbols = int64_t(m_config.symbols.size());
    const int64_t* data = m_data.data_ptr<int64_t>();
    std::vector<int64_t> winners, losers;
    for (int round = 0; int64_t(winners.size()) < count * d; ++round) {
        if (round == 1000)
            return makeError("the rule " + m_rule->spec() + " ranks the training sequences and their one-symbol "
                             "changes alike: no pair can be made");
        const int64_t draw = std::max<int64_t>(count - int64_t(winners.size()) / d, 256);
        const auto picks = torch::randint(0, n, {draw}, generator, torch::dtype(torch::kLong).device(device))
                               .to(torch::kCPU).contiguous();
        const auto places = torch::rand({draw, 2}, generator, torch::dtype(torch::kDouble).device(device))
                                .to(torch::kCPU).contiguous();
        const int64_t* p = picks.data_ptr<int64_t>();
        const double* u = places.data_ptr<double>();
        for (int64_t i = 0; i < draw && int64_t(winners.size()) < count * d; ++i) {
            const int64_t* winner = data + p[i] * d;
            std::vector<int64_t> loser(winner, winner + d);
            int64_t end = d;
            while (end > 0 && loser[size_t(end - 1)] == m_vocabulary.padToken())
                --end;
            loser[size_t(std::min<int64_t>(end - 1, int64_t(u[2 * i] * double(end))))] =
                std::min<int64_t>(symbols - 1, int64_t(u[2 * i + 1] * double(symbols)));
            if (rank(loser.data()) >= rank(winner))
                continue;
            winners.insert(winners.end(), winner, winner + d);
            losers.insert(losers.end(), loser.begin(), loser.end());
        }
    }
    return std::pair{torch::tensor(winners, torch::kLong).view({count, d}).to(device),
                     torch::tensor(losers, torch::kLong).view({count, d}).to(device)};
}

SampleMetrics SequencesTask::measureRows(const std::vector<int64_t>& rows, int64_t count) const
{
    SampleMetrics m;
    m.samples = count;
    m.histogram.axis = "length";
    for (int64_t l = m_config.minLength; l <= length(); ++l)
        m.histogram.labels.push_back(std::to_string(l));
    m.histogram.counts.assign(m.histogram.labels.size(), 0);
    int64_t valid = 0, novel = 0;
    double ruleSum = 0;
    std::unordered_set<std::string> distinct;
    for (int64_t r = 0; r < count; ++r) {
        const int64_t* tokens = rows.data() + r * length();
        if (!isValid(tokens)) {
            ++m.histogram.invalid;
            continue;
        }
        ++valid;
        const std::string text = m_vocabulary.format(tokens, length());
        ++m.histogram.counts[text.size() - size_t(m_config.minLength)];
        novel += m_dataSet.count(text) == 0;
        distinct.insert(text);
        if (m_rule)
            ruleSum += m_rule->score(text);
    }
    const double n = count ? double(count) : 1.0;
    const bool inData = m_config.validity == "in-data";
    m.set("vsr", double(valid) / n,
          inData ? "valid-sample ratio: share of samples that are one of the training sequences"
                 : "valid-sample ratio: share of samples of vocabulary symbols, pads only at the end, length " +
                       std::to_string(m_config.minLength) + ".." + std::to_string(length()),
          true);
    addRuleMetric(m, "rule_share", ruleSum);
    if (!inData && hasData()) {
        m.set("in_data_share", double(valid - novel) / n,
              "share of all samples that are one of the training sequences (for a word list: real words)", true);
        m.set("novel_share", double(novel) / n, "share of all samples that are valid and not in the training data", true);
    }
    m.set("unique_share", double(distinct.size()) / n, "distinct valid samples as a share of all samples: diversity",
          true);
    return m;
}

SequenceHint SequencesTask::hint(const std::vector<int64_t>& tokens) const
{
    if (int64_t(tokens.size()) != length())
        return {false, "invalid: wrong length", ""};
    const std::string text = m_vocabulary.format(tokens.data(), length());
    if (const std::string why = whyInvalid(tokens.data()); !why.empty())
        return {false, "invalid: " + why, ""};
    std::string value = "length " + std::to_string(text.size());
    if (m_config.validity != "in-data" && hasData())
        value += m_dataSet.count(text) ? ", in the data" : ", novel";
    return {true, value, m_rule ? m_rule->explain(text) : ""};
}

} // namespace d2dpo
