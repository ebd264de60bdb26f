// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/modelverdict.h"

#include <algorithm>
#include <cstdio>

namespace d2dpo {

std::string weakModelAdvice(const SampleMetrics& metrics)
{
    if (metrics.samples <= 0 || !(metrics.vsr() < kWeakModelVsr))
        return {};
    char text[320];
    std::snprintf(text, sizeof text,
                  "Too weak to label: only %.0f%% of its %lld samples are valid sequences (VSR %.3f), so most pairs "
                  "would hold an invalid sequence and a label between them teaches little. Pretrain it for more "
                  "steps, choose a bigger size, or import a trained model.",
                  100 * metrics.vsr(), static_cast<long long>(metrics.samples), metrics.vsr());
    return text;
}

std::string newModelFigures(const SampleMetrics& metrics)
{
    std::string line;
    char part[96];
    for (const MetricValue& v : metrics.values) {
        if (v.name != "vsr" && v.name != metrics.ruleMetric)
            continue;
        std::string label = v.name == "vsr" ? "VSR" : v.name; // "odd_ratio" -> "odd ratio"
        std::replace(label.begin(), label.end(), '_', ' ');
        std::snprintf(part, sizeof part, "%s%s %.3f", line.empty() ? "" : ", ", label.c_str(), v.value);
        line += part;
    }
    return line + " on " + std::to_string(metrics.samples) + " samples";
}

} // namespace d2dpo
