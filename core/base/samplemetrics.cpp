// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/samplemetrics.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace d2dpo {

std::optional<double> SampleMetrics::value(const std::string& name) const
{
    for (const MetricValue& v : values)
        if (v.name == name)
            return v.value;
    return std::nullopt;
}

double SampleMetrics::valueOr0(const std::string& name) const { return value(name).value_or(0.0); }

double SampleMetrics::vsr() const { return valueOr0("vsr"); }

void SampleMetrics::set(const std::string& name, double value, const std::string& description, bool plotted)
{
    for (MetricValue& v : values)
        if (v.name == name) {
            v = {name, value, description, plotted};
            return;
        }
    values.push_back({name, value, description, plotted});
}

std::string SampleMetrics::provenance() const
{
    std::string text = std::to_string(samples);
    text += " samples";
    if (seed) {
        text += ", seed ";
        text += std::to_string(*seed);
    }
    if (!sampler.empty()) {
        text += ", ";
        text += sampler;
    }
    return text;
}

std::string SampleMetrics::toJson() const
{
    nlohmann::json j = nlohmann::json::object();
    j["samples"] = samples;
    if (seed)
        j["seed"] = *seed;
    if (!sampler.empty())
        j["sampler"] = sampler;
    nlohmann::json plottedNames = nlohmann::json::array();
    nlohmann::json order = nlohmann::json::array();
    for (const MetricValue& v : values) {
        j[v.name] = v.value;
        order.push_back(v.name);
        if (v.plotted)
            plottedNames.push_back(v.name);
    }
    j["order"] = order;
    j["plotted"] = plottedNames;
    j["rule_metric"] = ruleMetric;
    j["histogram"] = {{"axis", histogram.axis},
                      {"labels", histogram.labels},
                      {"counts", histogram.counts},
                      {"invalid", histogram.invalid}};
    return j.dump();
}

Result<SampleMetrics> sampleMetricsFromJson(const std::string& text)
{
    try {
        const auto j = nlohmann::json::parse(text);
        if (!j.is_object())
            return makeError("sample metrics are not a JSON object");
        SampleMetrics m;
        m.samples = j.value("samples", int64_t(0));
        if (j.contains("seed") && j.at("seed").is_number_unsigned())
            m.seed = j.at("seed").get<uint64_t>();
        if (j.contains("sampler") && j.at("sampler").is_string())
            m.sampler = j.at("sampler").get<std::string>();
        std::vector<std::string> order;
        if (j.contains("order"))
            order = j.at("order").get<std::vector<std::string>>();
        else // the older form: every number but the counts, in the file's order
            for (const auto& [key, value] : j.items())
                if (value.is_number() && key != "samples" && key != "invalid" && key != "seed")
                    order.push_back(key);
        std::vector<std::string> plotted = j.value("plotted", std::vector<std::string>{});
        for (const std::string& name : order)
            if (j.contains(name) && j.at(name).is_number())
                m.values.push_back({name, j.at(name).get<double>(), "",
                                    std::find(plotted.begin(), plotted.end(), name) != plotted.end()});
        m.ruleMetric = j.value("rule_metric", std::string(j.contains("odd_ratio") ? "odd_ratio" : ""));
        if (j.contains("histogram") && j.at("histogram").is_object()) {
            const auto& h = j.at("histogram");
            m.histogram.axis = h.value("axis", std::string());
            m.histogram.labels = h.value("labels", std::vector<std::string>{});
            m.histogram.counts = h.value("counts", std::vector<int64_t>{});
            m.histogram.invalid = h.value("invalid", int64_t(0));
        } else if (j.contains("histogram") && j.at("histogram").is_array()) {
            // Built whole: GCC 12 at -O3 warns (wrongly) about assigning a literal to a member string.
            Histogram older{std::string(1, 'i'), {}, j.at("histogram").get<std::vector<int64_t>>(),
                            j.value("invalid", int64_t(0))};
            for (size_t i = 0; i < older.counts.size(); ++i)
                older.labels.push_back(std::to_string(i));
            m.histogram = std::move(older);
        }
        if (m.histogram.labels.size() != m.histogram.counts.size())
            return makeError("sample metrics: the histogram's labels and counts differ in number");
        return m;
    } catch (const nlohmann::json::exception& e) {
        return makeError(std::string("sample metrics are malformed: ") + e.what());
    }
}

} // namespace d2dpo
