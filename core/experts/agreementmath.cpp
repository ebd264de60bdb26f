// SPDX-License-Identifier: GPL-3.0-or-later
#include "experts/agreementmath.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>

namespace d2dpo {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

double cohensKappa(const std::vector<int>& a, const std::vector<int>& b)
{
    const size_t n = std::min(a.size(), b.size());
    if (n == 0)
        return kNaN;
    std::map<int, double> shareA, shareB;
    double agree = 0;
    for (size_t i = 0; i < n; ++i) {
        agree += a[i] == b[i];
        shareA[a[i]] += 1.0 / double(n);
        shareB[b[i]] += 1.0 / double(n);
    }
    double expected = 0;
    for (const auto& [category, share] : shareA)
        if (auto other = shareB.find(category); other != shareB.end())
            expected += share * other->second;
    const double observed = agree / double(n);
    if (std::abs(1 - expected) < 1e-12)
        return kNaN;
    return (observed - expected) / (1 - expected);
}

double krippendorffAlpha(const std::vector<std::vector<int>>& units)
{
    // The coincidence matrix: each unit's m judgements give m(m-1) ordered pairs, weighted 1/(m-1).
    std::map<std::pair<int, int>, double> coincidences;
    std::map<int, double> marginals;
    double total = 0;
    for (const std::vector<int>& unit : units) {
        const size_t m = unit.size();
        if (m < 2)
            continue;
        for (size_t i = 0; i < m; ++i)
            for (size_t j = 0; j < m; ++j)
                if (i != j)
                    coincidences[{unit[i], unit[j]}] += 1.0 / double(m - 1);
        for (int value : unit)
            marginals[value] += 1;
        total += double(m);
    }
    if (total < 2)
        return kNaN;
    double observed = 0; // disagreeing coincidences
    for (const auto& [cell, weight] : coincidences)
        if (cell.first != cell.second)
            observed += weight;
    double expected = 0; // sum over c != k of n_c n_k, / (n - 1)
    for (const auto& [c, nc] : marginals)
        for (const auto& [k, nk] : marginals)
            if (c != k)
                expected += nc * nk;
    expected /= total - 1;
    if (expected <= 0)
        return kNaN;
    return 1 - observed / expected;
}

void forEachResample(int64_t count, int resamples, uint64_t seed,
                     const std::function<void(const std::vector<int64_t>&)>& visit)
{
    if (count <= 0)
        return;
    std::mt19937_64 random(seed);
    std::uniform_int_distribution<int64_t> pick(0, count - 1);
    std::vector<int64_t> indices(static_cast<size_t>(count));
    for (int r = 0; r < resamples; ++r) {
        for (int64_t& index : indices)
            index = pick(random);
        visit(indices);
    }
}

Interval percentileInterval(std::vector<double> values, int resamples)
{
    values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return std::isnan(v); }), values.end());
    if (values.empty() || values.size() * 2 < size_t(std::max(resamples, 1)))
        return {kNaN, kNaN};
    std::sort(values.begin(), values.end());
    auto quantile = [&](double q) {
        // Linear interpolation between order statistics (type 7, as R and NumPy default to).
        const double at = q * double(values.size() - 1);
        const size_t below = size_t(std::floor(at));
        const size_t above = std::min(below + 1, values.size() - 1);
        return values[below] + (at - double(below)) * (values[above] - values[below]);
    };
    return {quantile(0.025), quantile(0.975)};
}

Interval bootstrapInterval(int64_t count, const std::function<double(const std::vector<int64_t>&)>& statistic,
                           int resamples, uint64_t seed)
{
    std::vector<double> values;
    values.reserve(size_t(std::max(resamples, 0)));
    forEachResample(count, resamples, seed, [&](const std::vector<int64_t>& pick) { values.push_back(statistic(pick)); });
    return percentileInterval(std::move(values), resamples);
}

double median(std::vector<double> values)
{
    if (values.empty())
        return kNaN;
    std::sort(values.begin(), values.end());
    const size_t middle = values.size() / 2;
    return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

} // namespace d2dpo
