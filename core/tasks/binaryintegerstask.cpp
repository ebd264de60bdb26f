// SPDX-License-Identifier: GPL-3.0-or-later
#include "tasks/binaryintegerstask.h"

#include <cmath>

#include <torch/torch.h>

namespace d2dpo {

namespace {

TaskConfig configOf(int64_t length)
{
    TaskConfig config;
    config.name = "binary-integers";
    config.length = int(length);
    config.rule = "odd";
    return config;
}

class OddRule final : public Rule {
public:
    std::string spec() const override { return "odd"; }
    std::string describe() const override { return "valid odd beats valid even beats invalid"; }
    double score(const std::string& text) const override
    {
        size_t ones = 0;
        while (ones < text.size() && text[ones] == '1')
            ++ones;
        return double(ones % 2);
    }
    std::string explain(const std::string& text) const override { return score(text) > 0 ? "odd" : "even"; }
};

} // namespace

Result<std::unique_ptr<Task>> BinaryIntegersTask::make(const TaskConfig& config)
{
    if (!config.rule.empty() && config.rule != "odd")
        return makeError("unknown rule '" + config.rule + "' for the binary-integers task (known: odd)");
    return std::unique_ptr<Task>(std::make_unique<BinaryIntegersTask>(config.length));
}

BinaryIntegersTask::BinaryIntegersTask(int64_t length)
    : Task(configOf(length), Vocabulary("01", false))
{
    m_rule = std::make_unique<OddRule>();
}

torch::Tensor BinaryIntegersTask::encode(const torch::Tensor& values) const
{
    const auto positions = torch::arange(length(), values.options());
    return positions.unsqueeze(0).lt(values.unsqueeze(1)).to(torch::kLong);
}

int64_t BinaryIntegersTask::decode(const int64_t* tokens) const
{
    int64_t ones = 0;
    while (ones < length() && tokens[ones] == 1)
        ++ones;
    for (int64_t i = ones; i < length(); ++i)
        if (tokens[i] != 0)
            return -1;
    return ones;
}

torch::Tensor BinaryIntegersTask::sampleData(int64_t count, torch::Generator& generator, torch::Device device) const
{
    const auto values = torch::randint(0, length() + 1, {count}, generator, torch::dtype(torch::kLong).device(device));
    return encode(values);
}

Result<std::pair<torch::Tensor, torch::Tensor>> BinaryIntegersTask::rulePairs(int64_t count,
                                                                              torch::Generator& generator,
                                                                              torch::Device device) const
{
    // Winner b_i for a uniformly drawn odd i, loser b_j for a uniformly drawn even j (the paper's).
    const auto options = torch::dtype(torch::kLong).device(device);
    const int64_t oddValues = (length() + 1) / 2; // 1, 3, ..., <= N
    const int64_t evenValues = length() / 2 + 1;  // 0, 2, ..., <= N
    const auto odd = torch::randint(0, oddValues, {count}, generator, options) * 2 + 1;
    const auto even = torch::randint(0, evenValues, {count}, generator, options) * 2;
    return std::pair{encode(odd), encode(even)};
}

SampleMetrics BinaryIntegersTask::measureRows(const std::vector<int64_t>& rows, int64_t count) const
{
    const int64_t maxValue = length();
    SampleMetrics m;
    m.samples = count;
    m.histogram.axis = "i";
    for (int64_t v = 0; v <= maxValue; ++v)
        m.histogram.labels.push_back(std::to_string(v));
    m.histogram.counts.assign(size_t(maxValue + 1), 0);
    int64_t valid = 0;
    int64_t odd = 0;
    for (int64_t r = 0; r < count; ++r) {
        const int64_t value = decode(rows.data() + r * length());
        if (value < 0) {
            ++m.histogram.invalid;
            continue;
        }
        ++valid;
        ++m.histogram.counts[size_t(value)];
        odd += value % 2;
    }
    double tv = 0, entropy = 0;
    const int64_t oddValues = (maxValue + 1) / 2; // 1, 3, ..., <= maxValue
    for (int64_t v = 0; valid > 0 && v <= maxValue; ++v) {
        const double p = double(m.histogram.counts[size_t(v)]) / double(valid);
        const double target = (v % 2 == 1 && oddValues > 0) ? 1.0 / double(oddValues) : 0.0;
        tv += std::abs(p - target);
        if (p > 0)
            entropy -= p * std::log(p);
    }
    const double n = count ? double(count) : 1.0;
    m.set("vsr", double(valid) / n, "valid-sample ratio: share of samples that encode some integer i", true);
    addRuleMetric(m, "odd_ratio", double(odd));
    m.values.back().description = "share of all samples that encode an odd integer (the paper's figure)";
    m.set("odd_share_valid", valid ? double(odd) / double(valid) : 0.0,
          "share of the valid samples that encode an odd integer");
    m.set("tv_from_odd_uniform", valid ? tv / 2 : 0.0,
          "total-variation distance of the valid samples from uniform over the odd integers");
    m.set("entropy", entropy, "entropy of the valid samples' histogram over i (nats): diversity");
    return m;
}

SequenceHint BinaryIntegersTask::hint(const std::vector<int64_t>& tokens) const
{
    const int64_t value = int64_t(tokens.size()) == length() ? decode(tokens.data()) : -1;
    if (value < 0)
        return {false, "invalid: not i ones followed by zeros", ""};
    return {true, "i = " + std::to_string(value), value % 2 ? "odd" : "even"};
}

} // namespace d2dpo
