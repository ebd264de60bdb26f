// SPDX-License-Identifier: GPL-3.0-or-later
#include "research/seedstats.h"

#include <cmath>
#include <cstdio>

namespace d2dpo {

Moments moments(const std::vector<double>& values)
{
    Moments m;
    if (values.empty())
        return {std::nan(""), std::nan("")};
    for (double v : values)
        m.mean += v;
    m.mean /= double(values.size());
    if (values.size() > 1) {
        for (double v : values)
            m.sd += (v - m.mean) * (v - m.mean);
        m.sd = std::sqrt(m.sd / double(values.size() - 1));
    }
    return m;
}

std::string fixed(double value, int digits)
{
    if (std::isnan(value))
        return "-";
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", digits, value);
    return text;
}

} // namespace d2dpo
