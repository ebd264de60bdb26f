// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/samplemetrics.h"
#include "base/metricnames.h"

#include <cmath>

#include <nlohmann/json.hpp>

namespace d2dpo {

SampleMetrics computeSampleMetrics(const std::vector<int64_t>& decoded, int64_t maxValue)
{
    SampleMetrics m;
    m.samples = static_cast<int64_t>(decoded.size());
    m.histogram.assign(static_cast<size_t>(maxValue + 1), 0);
    int64_t valid = 0;
    int64_t odd = 0;
    for (int64_t value : decoded) {
        if (value < 0 || value > maxValue) {
            ++m.invalid;
            continue;
        }
        ++valid;
        ++m.histogram[static_cast<size_t>(value)];
        odd += value % 2;
    }
    if (m.samples == 0)
        return m;
    m.vsr = double(valid) / double(m.samples);
    m.oddRatio = double(odd) / double(m.samples);
    if (valid == 0)
        return m;
    m.oddShareValid = double(odd) / double(valid);

    const int64_t oddValues = (maxValue + 1) / 2; // 1, 3, ..., <= maxValue
    double tv = 0;
    for (int64_t v = 0; v <= maxValue; ++v) {
        const double p = double(m.histogram[size_t(v)]) / double(valid);
        const double target = (v % 2 == 1 && oddValues > 0) ? 1.0 / double(oddValues) : 0.0;
        tv += std::abs(p - target);
        if (p > 0)
            m.entropy -= p * std::log(p);
    }
    m.tvFromOddUniform = tv / 2;
    return m;
}

std::string SampleMetrics::toJson() const
{
    using namespace metric;
    return nlohmann::json{{kSamples, samples},
                          {kVsr, vsr},
                          {kOddRatio, oddRatio},
                          {kOddShareValid, oddShareValid},
                          {kTvFromOddUniform, tvFromOddUniform},
                          {kEntropy, entropy},
                          {"histogram", histogram},
                          {"invalid", invalid}}
        .dump();
}

} // namespace d2dpo
