// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/metricnames.h"

namespace d2dpo::metric {

namespace {

constexpr const char* kReferencePrefix = "reference/";

} // namespace

std::string ofReference(const std::string& name) { return kReferencePrefix + name; }

const std::vector<Description>& descriptions()
{
    static const std::vector<Description> list = {
        {kLoss, "D2-DPO loss: -log sigmoid of the weighted divergence margin, averaged over the batch"},
        {kStepsPerSecond, "training steps per second"},
        {kRewardsChosen, "implicit reward of the chosen sequences: w(t) times their divergence from the reference"},
        {kRewardsRejected, "implicit reward of the rejected sequences"},
        {kRewardsMargins, "chosen minus rejected reward (nats): the better progress signal"},
        {kRewardsAccuracies, "share of pairs whose chosen reward beats the rejected one"},
        {kVsr, "valid-sample ratio: share of samples that are a valid sequence of the task"},
        {kSamples, "samples drawn for the evaluation"},
    };
    return list;
}

std::string describe(const std::string& name)
{
    const std::string prefix = kReferencePrefix;
    const bool ofRef = name.rfind(prefix, 0) == 0;
    const std::string base = ofRef ? name.substr(prefix.size()) : name;
    for (const Description& d : descriptions())
        if (base == d.name)
            return ofRef ? std::string("the reference model's ") + d.text : std::string(d.text);
    return {};
}

std::vector<std::pair<const char*, double>> named(const RewardStats& r)
{
    return {{kRewardsChosen, r.chosen},
            {kRewardsRejected, r.rejected},
            {kRewardsMargins, r.margins},
            {kRewardsAccuracies, r.accuracies}};
}

std::vector<std::pair<std::string, double>> recorded(const SampleMetrics& m)
{
    std::vector<std::pair<std::string, double>> values;
    for (const MetricValue& v : m.values)
        values.emplace_back(v.name, v.value);
    return values;
}

} // namespace d2dpo::metric
