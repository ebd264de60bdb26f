// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/nearestidentity.h"

#include <algorithm>
#include <numeric>
#include <string_view>
#include <unordered_map>

namespace d2dpo {

namespace {

std::string_view unpadded(const std::string& text)
{
    const size_t end = text.find_last_not_of('.');
    return end == std::string::npos ? std::string_view() : std::string_view(text).substr(0, end + 1);
}

/// An identity as the fraction equal / over, compared exactly (a float compare could pick a later
/// training sequence of the same identity).
struct Fraction {
    int64_t equal = 0;
    int64_t over = 1;
    bool greaterThan(const Fraction& other) const { return equal * other.over > other.equal * over; }
    double value() const { return double(equal) / double(over); }
};

/// The identity of `sample` with `candidate` when it beats `best`; `best` otherwise. Stops
/// counting as soon as the rest of the positions cannot lift it above `best` (with 35,000 words
/// or long proteins most candidates are given up after a few positions).
Fraction betterOf(std::string_view sample, std::string_view candidate, const Fraction& best)
{
    const size_t common = std::min(sample.size(), candidate.size());
    const auto over = int64_t(std::max(sample.size(), candidate.size()));
    if (over == 0)
        return Fraction{1, 1}.greaterThan(best) ? Fraction{1, 1} : best;
    if (!Fraction{int64_t(common), over}.greaterThan(best))
        return best;
    int64_t mismatches = 0;
    for (size_t p = 0; p < common; ++p) {
        if (sample[p] == candidate[p])
            continue;
        ++mismatches;
        if (!Fraction{int64_t(common) - mismatches, over}.greaterThan(best))
            return best;
    }
    return Fraction{int64_t(common) - mismatches, over};
}

double medianOf(std::vector<double> values)
{
    if (values.empty())
        return 0.0;
    const size_t middle = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + middle, values.end());
    if (values.size() % 2 == 1)
        return values[middle];
    const double upper = values[middle];
    const double lower = *std::max_element(values.begin(), values.begin() + middle);
    return (lower + upper) / 2.0;
}

} // namespace

double positionIdentity(const std::string& first, const std::string& second)
{
    return betterOf(unpadded(first), unpadded(second), Fraction{-1, 1}).value();
}

NearestIdentity nearestTrainingIdentity(const std::vector<std::string>& samples,
                                        const std::vector<std::string>& training, int bins)
{
    // Training data keeps its duplicates (words, the paper's integers): compare each text once,
    // reporting its first index.
    std::vector<std::pair<std::string_view, int64_t>> distinct;
    std::unordered_map<std::string_view, int64_t> seen;
    for (size_t i = 0; i < training.size(); ++i) {
        const std::string_view text = unpadded(training[i]);
        if (seen.emplace(text, int64_t(i)).second)
            distinct.emplace_back(text, int64_t(i));
    }

    NearestIdentity result;
    result.histogram.assign(size_t(std::max(bins, 1)), 0);
    result.identity.reserve(samples.size());
    result.nearest.reserve(samples.size());
    for (const std::string& sample : samples) {
        const std::string_view text = unpadded(sample);
        Fraction best{-1, 1};
        int64_t nearest = -1;
        if (auto exact = seen.find(text); exact != seen.end()) {
            best = Fraction{1, 1};
            nearest = exact->second;
        }
        for (size_t i = 0; i < distinct.size() && best.equal != best.over; ++i) {
            const Fraction candidate = betterOf(text, distinct[i].first, best);
            if (candidate.greaterThan(best)) {
                best = candidate;
                nearest = distinct[i].second;
            }
        }
        const double identity = nearest >= 0 ? best.value() : 0.0;
        result.identity.push_back(identity);
        result.nearest.push_back(nearest);
        result.copies += nearest >= 0 && best.equal == best.over ? 1 : 0;
        // The bin from the exact fraction: 3/10 lands in [0.3, 0.4) whatever 0.3 x 10 rounds to.
        const auto bins = int64_t(result.histogram.size());
        const int64_t bin = nearest >= 0 ? std::min(best.equal * bins / best.over, bins - 1) : 0;
        ++result.histogram[size_t(bin)];
    }
    if (!samples.empty())
        result.mean = std::accumulate(result.identity.begin(), result.identity.end(), 0.0) / double(samples.size());
    result.median = medianOf(result.identity);
    return result;
}

} // namespace d2dpo
