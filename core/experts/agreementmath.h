// SPDX-License-Identifier: GPL-3.0-or-later
// The agreement statistics on nominal judgements: Cohen's kappa for two raters, Krippendorff's
// alpha for any number (missing judgements allowed), and percentile bootstrap intervals. A
// category is a small integer; an undefined statistic (every judgement in one category, or
// nothing to compare) is NaN, which reports print as "undefined" and JSON as null.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace d2dpo {

/// Kappa of two raters' judgements of the same items (a[i] and b[i] judge item i):
/// (p_o - p_e) / (1 - p_e), p_e from each rater's own category shares. NaN when there is no item
/// or p_e is 1.
double cohensKappa(const std::vector<int>& a, const std::vector<int>& b);

/// Krippendorff's alpha for nominal data: `units[u]` holds the judgements of unit u (one per rater
/// who judged it). Units with fewer than two judgements are not pairable and are left out. NaN
/// when fewer than two pairable judgements remain or all of them are one category.
double krippendorffAlpha(const std::vector<std::vector<int>>& units);

struct Interval {
    double low = 0;
    double high = 0;
};

/// Calls `visit` with `resamples` seeded resamples (with replacement) of the indices 0..count-1.
void forEachResample(int64_t count, int resamples, uint64_t seed,
                     const std::function<void(const std::vector<int64_t>&)>& visit);

/// The 2.5% and 97.5% percentiles of a statistic's bootstrap values (NaNs left out); NaN bounds
/// when fewer than half of `resamples` values remain.
Interval percentileInterval(std::vector<double> values, int resamples);

/// A percentile bootstrap 95% interval of `statistic` over `count` items resampled with
/// replacement (`resamples` times, seeded): `statistic` is given the indices of one resample.
/// Resamples whose statistic is NaN are left out; NaN bounds when fewer than half remain.
Interval bootstrapInterval(int64_t count, const std::function<double(const std::vector<int64_t>&)>& statistic,
                           int resamples = 1000, uint64_t seed = 1);

/// The median of `values` (the mean of the middle two for an even count); NaN when empty.
double median(std::vector<double> values);

} // namespace d2dpo
