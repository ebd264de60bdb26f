// SPDX-License-Identifier: GPL-3.0-or-later
#include "assays/measuredpairs.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <random>
#include <sstream>
#include <unordered_set>

namespace d2dpo {

namespace {

class PairMaker {
public:
    PairMaker(const std::vector<MeasuredSequence>& sequences, const MeasuredPairOptions& options)
        : m_sequences(sequences), m_options(options), m_random(options.seed)
    {
    }

    /// How much better a is than b's value would say, by the assay's direction.
    double goodness(size_t i) const
    {
        return m_options.direction == AssayDirection::HigherIsBetter ? m_sequences[i].mean : -m_sequences[i].mean;
    }

    bool passes(size_t a, size_t b) const
    {
        const double difference = std::abs(m_sequences[a].mean - m_sequences[b].mean);
        const double noise = m_options.k * std::hypot(m_sequences[a].spread, m_sequences[b].spread);
        return difference > std::max(m_options.fixedMargin, noise);
    }

    /// Adds the pair once (either order), the better first; false when it was there.
    bool add(size_t a, size_t b)
    {
        const uint64_t key = (uint64_t(std::min(a, b)) << 32) | uint64_t(std::max(a, b));
        if (!m_seen.insert(key).second)
            return false;
        if (goodness(a) < goodness(b))
            std::swap(a, b);
        m_set.pairs.push_back({a, b});
        return true;
    }

    size_t uniform(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(m_random); }
    bool full() const { return m_set.pairs.size() >= m_options.budget; }
    size_t attempts() const { return m_options.budget * 20 + 1000; }
    std::mt19937_64& random() { return m_random; }

    Result<MeasuredPairSet> finish(const std::string& description)
    {
        if (m_set.pairs.empty()) {
            double lowest = m_sequences.front().mean, highest = lowest;
            for (const MeasuredSequence& s : m_sequences) {
                lowest = std::min(lowest, s.mean);
                highest = std::max(highest, s.mean);
            }
            std::ostringstream why;
            why << "no pair of its " << m_sequences.size() << " sequences differs by more than the margin asked for ("
                << m_options.fixedMargin << ", or " << m_options.k << " times the pair's combined spread); the "
                << "largest difference is " << highest - lowest;
            return makeError(why.str());
        }
        std::unordered_set<size_t> used;
        for (const MeasuredPair& p : m_set.pairs) {
            used.insert(p.winner);
            used.insert(p.loser);
        }
        m_set.sequencesUsed = used.size();
        m_set.description = description;
        return std::move(m_set);
    }

    const std::vector<MeasuredSequence>& sequences() const { return m_sequences; }
    const MeasuredPairOptions& options() const { return m_options; }

private:
    const std::vector<MeasuredSequence>& m_sequences;
    const MeasuredPairOptions& m_options;
    std::mt19937_64 m_random;
    std::unordered_set<uint64_t> m_seen;
    MeasuredPairSet m_set;
};

/// Random pairs: a first sequence at random, a second among those past the fixed margin (found in
/// the sorted values by binary search), kept when it also passes the spread rule.
Result<MeasuredPairSet> marginPairs(PairMaker& maker)
{
    const auto& s = maker.sequences();
    const size_t n = s.size();
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return s[a].mean < s[b].mean; });
    std::vector<double> means(n);
    for (size_t i = 0; i < n; ++i)
        means[i] = s[order[i]].mean;
    const double fixed = maker.options().fixedMargin;
    const auto eligible = [&](size_t i) {
        const size_t lo = size_t(std::lower_bound(means.begin(), means.end(), means[i] - fixed) - means.begin());
        const size_t hi = size_t(std::upper_bound(means.begin(), means.end(), means[i] + fixed) - means.begin());
        return std::pair{lo, hi};
    };
    double candidates = 0;
    for (size_t i = 0; i < n; ++i) {
        const auto [lo, hi] = eligible(i);
        candidates += double(lo + (n - hi));
    }
    candidates /= 2;
    for (size_t attempt = 0; attempt < maker.attempts() && !maker.full(); ++attempt) {
        const size_t i = maker.uniform(n);
        const auto [lo, hi] = eligible(i);
        const size_t count = lo + (n - hi);
        if (count == 0)
            continue;
        const size_t r = maker.uniform(count);
        const size_t j = r < lo ? r : hi + (r - lo);
        if (maker.passes(order[i], order[j]))
            maker.add(order[i], order[j]);
    }
    std::ostringstream d;
    d << "random pairs whose values differ by more than max(" << maker.options().fixedMargin << ", "
      << maker.options().k << " x their combined spread), of " << std::llround(candidates)
      << " pairs past the fixed margin";
    return maker.finish(d.str());
}

Result<MeasuredPairSet> bestAgainstRest(PairMaker& maker)
{
    const size_t n = maker.sequences().size();
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return maker.goodness(a) > maker.goodness(b); });
    const size_t top = std::clamp<size_t>(size_t(std::ceil(maker.options().bestShare * double(n))), 1, n - 1);
    for (size_t attempt = 0; attempt < maker.attempts() && !maker.full(); ++attempt) {
        const size_t best = order[maker.uniform(top)];
        const size_t other = order[top + maker.uniform(n - top)];
        if (maker.passes(best, other))
            maker.add(best, other);
    }
    return maker.finish("each of the best " + std::to_string(top) + " against random ones of the other " +
                        std::to_string(n - top));
}

Result<MeasuredPairSet> clusterPairs(PairMaker& maker)
{
    const auto clusters = unionMaskClusters(maker.sequences(), maker.options().maxClusterSize);
    std::vector<std::pair<size_t, size_t>> inside;
    for (const auto& cluster : clusters)
        for (size_t a = 0; a < cluster.size(); ++a)
            for (size_t b = a + 1; b < cluster.size(); ++b)
                if (maker.passes(cluster[a], cluster[b]))
                    inside.emplace_back(cluster[a], cluster[b]);
    // A random choice of the budget among them (a partial Fisher-Yates shuffle).
    const size_t keep = std::min(inside.size(), maker.options().budget);
    for (size_t i = 0; i < keep; ++i) {
        std::swap(inside[i], inside[i + maker.uniform(inside.size() - i)]);
        maker.add(inside[i].first, inside[i].second);
    }
    return maker.finish(std::to_string(clusters.size()) + " clusters of sequences sharing a union mask (at most " +
                        std::to_string(maker.options().maxClusterSize) + " each), " + std::to_string(inside.size()) +
                        " pairs inside them past the margin");
}

} // namespace

std::vector<std::vector<size_t>> unionMaskClusters(const std::vector<MeasuredSequence>& sequences,
                                                   size_t maxClusterSize)
{
    std::map<size_t, std::vector<size_t>> byLength;
    for (size_t i = 0; i < sequences.size(); ++i)
        byLength[sequences[i].sequence.size()].push_back(i);
    std::vector<std::vector<size_t>> out;
    for (const auto& [length, members] : byLength) {
        // The family's consensus: the most common symbol at each position.
        std::string consensus(length, '\0');
        for (size_t p = 0; p < length; ++p) {
            std::array<size_t, 256> counts{};
            for (size_t i : members)
                ++counts[static_cast<unsigned char>(sequences[i].sequence[p])];
            consensus[p] = char(std::max_element(counts.begin(), counts.end()) - counts.begin());
        }
        std::map<size_t, std::vector<uint32_t>> masks;
        for (size_t i : members) {
            std::vector<uint32_t>& mask = masks[i];
            for (size_t p = 0; p < length; ++p)
                if (sequences[i].sequence[p] != consensus[p])
                    mask.push_back(uint32_t(p));
        }
        // Sorted by mask, so that sequences mutated at the same positions come together; a cluster
        // grows while its union mask stays within its first member's mask and two positions more.
        std::vector<size_t> order = members;
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return masks[a] < masks[b]; });
        std::vector<char> inUnion(length, 0);
        std::vector<uint32_t> unionPositions;
        size_t allowed = 0;
        bool open = false;
        for (size_t i : order) {
            const std::vector<uint32_t>& mask = masks[i];
            size_t fresh = 0;
            for (uint32_t p : mask)
                fresh += !inUnion[p];
            if (!open || out.back().size() >= maxClusterSize || unionPositions.size() + fresh > allowed) {
                for (uint32_t p : unionPositions)
                    inUnion[p] = 0;
                unionPositions.clear();
                allowed = mask.size() + 2;
                out.push_back({});
                open = true;
            }
            for (uint32_t p : mask)
                if (!inUnion[p]) {
                    inUnion[p] = 1;
                    unionPositions.push_back(p);
                }
            out.back().push_back(i);
        }
    }
    return out;
}

Result<MeasuredPairSet> makeMeasuredPairs(const std::vector<MeasuredSequence>& sequences,
                                          const MeasuredPairOptions& options)
{
    if (sequences.size() < 2)
        return makeError("pairs need at least 2 measured sequences; there " +
                         std::string(sequences.size() == 1 ? "is 1" : "are none"));
    if (options.budget < 1)
        return makeError("the pair budget must be at least 1");
    if (!(options.k >= 0) || !(options.fixedMargin >= 0) || !std::isfinite(options.k) ||
        !std::isfinite(options.fixedMargin))
        return makeError("the margin and k must be finite and at least 0");
    PairMaker maker(sequences, options);
    switch (options.strategy) {
    case PairStrategy::Margin:
        return marginPairs(maker);
    case PairStrategy::BestAgainstRest:
        return bestAgainstRest(maker);
    case PairStrategy::UnionMaskClusters:
        return clusterPairs(maker);
    }
    return makeError("unknown pair strategy");
}

} // namespace d2dpo
