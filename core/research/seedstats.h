// SPDX-License-Identifier: GPL-3.0-or-later
// What the research tables say about a figure over seeds: its mean and sample standard deviation,
// and the figure as the tables print it. Shared by `d2dpo study` and `d2dpo labelstudy`.
#pragma once

#include <string>
#include <vector>

namespace d2dpo {

struct Moments {
    double mean = 0; ///< NaN without values
    double sd = 0;   ///< the sample standard deviation: 0 for one value, NaN without values
};
Moments moments(const std::vector<double>& values);

/// `value` with `digits` decimals; "-" for NaN (a figure no seed gave).
std::string fixed(double value, int digits);

} // namespace d2dpo
