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

/// Random draws per pair asked for, before a strategy gives up: enough that a margin passed by one
/// draw in five still fills the budget, and bounded when almost nothing passes.
constexpr size_t kDrawsPerPair = 20;
constexpr size_t kExtraDraws = 1000;

/// The pair with the largest difference a strategy could have made, and the margin it had to pass:
/// what the message says when no pair passed.
struct Extreme {
    double difference = 0;
    double margin = 0;
};

/// The state every strategy shares: the margin rule, the pairs made so far (none twice), the seeded
/// generator and the verdict.
class PairMaker {
public:
    PairMaker(const std::vector<MeasuredSequence>& sequences, const MeasuredPairOptions& options)
        : m_sequences(sequences), m_options(options), m_random(options.seed)
    {
    }

    /// Larger is better, whichever the assay's direction.
    double goodness(size_t i) const
    {
        return m_options.direction == AssayDirection::HigherIsBetter ? m_sequences[i].mean : -m_sequences[i].mean;
    }

    /// The difference a and b must exceed: the fixed margin, or k times their combined spread.
    double marginOf(size_t a, size_t b) const
    {
        return std::max(m_options.fixedMargin, m_options.k * std::hypot(m_sequences[a].spread, m_sequences[b].spread));
    }

    double difference(size_t a, size_t b) const { return std::abs(m_sequences[a].mean - m_sequences[b].mean); }
    bool passes(size_t a, size_t b) const { return difference(a, b) > marginOf(a, b); }
    Extreme extremeOf(size_t a, size_t b) const { return {difference(a, b), marginOf(a, b)}; }

    /// Adds the pair once (either order), the better as the winner; false when it was there.
    bool add(size_t a, size_t b)
    {
        // makeMeasuredPairs refuses 2^32 sequences or more, so the two indices fit one key.
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
    bool empty() const { return m_set.pairs.empty(); }
    size_t draws() const { return m_options.budget * kDrawsPerPair + kExtraDraws; }

    /// The pairs made, or an error naming the largest difference there was and its margin.
    Result<MeasuredPairSet> finish(std::string description, size_t candidates, const Extreme& extreme)
    {
        if (m_set.pairs.empty()) {
            std::ostringstream why;
            why << "no pair of the " << m_sequences.size() << " measured sequences differs by more than the margin "
                << "asked for (" << m_options.fixedMargin << ", or " << m_options.k
                << " times the pair's combined spread); the largest difference found is " << extreme.difference
                << ", against a margin of " << extreme.margin << " for that pair";
            return makeError(why.str());
        }
        std::unordered_set<size_t> used;
        for (const MeasuredPair& p : m_set.pairs) {
            used.insert(p.winner);
            used.insert(p.loser);
        }
        m_set.sequencesUsed = used.size();
        m_set.candidates = candidates;
        m_set.description = std::move(description);
        return std::move(m_set);
    }

    const std::vector<MeasuredSequence>& sequences() const { return m_sequences; }
    const MeasuredPairOptions& options() const { return m_options; }

    /// Indices sorted by `key`, ties by index: the same input gives the same order on any library.
    template <typename Key>
    std::vector<size_t> sortedBy(Key key) const
    {
        std::vector<size_t> order(m_sequences.size());
        for (size_t i = 0; i < order.size(); ++i)
            order[i] = i;
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
            const double ka = key(a), kb = key(b);
            return ka < kb || (ka == kb && a < b);
        });
        return order;
    }

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
    const std::vector<size_t> order = maker.sortedBy([&](size_t i) { return s[i].mean; });
    std::vector<double> means(n);
    for (size_t i = 0; i < n; ++i)
        means[i] = s[order[i]].mean;
    // Those past the fixed margin from the i-th lie below lo and from hi on (strictly past it).
    const double fixed = maker.options().fixedMargin;
    const auto eligible = [&](size_t i) {
        const size_t lo = size_t(std::lower_bound(means.begin(), means.end(), means[i] - fixed) - means.begin());
        const size_t hi = size_t(std::upper_bound(means.begin(), means.end(), means[i] + fixed) - means.begin());
        return std::pair{lo, hi};
    };
    size_t pastFixed = 0; // each pair counted from both ends
    for (size_t i = 0; i < n; ++i) {
        const auto [lo, hi] = eligible(i);
        pastFixed += lo + (n - hi);
    }
    for (size_t draw = 0; draw < maker.draws() && !maker.full(); ++draw) {
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
    // When no draw found a pair, the extremes: they pass whenever any pair passes the fixed margin
    // alone, so a few sequences with wide spreads still give their one clear pair.
    const size_t lowest = order.front(), highest = order.back();
    if (maker.empty() && maker.passes(lowest, highest))
        maker.add(lowest, highest);
    std::ostringstream d;
    d << "random pairs whose values differ by more than max(" << fixed << ", " << maker.options().k
      << " x their combined spread), drawn from exactly " << pastFixed / 2
      << " pairs past the fixed margin (the spread rule turns some of them away)";
    return maker.finish(d.str(), pastFixed / 2, maker.extremeOf(lowest, highest));
}

/// The best share, each against random others: a draw picks one of the best and one of the rest.
Result<MeasuredPairSet> bestAgainstRest(PairMaker& maker)
{
    const size_t n = maker.sequences().size();
    const std::vector<size_t> order = maker.sortedBy([&](size_t i) { return -maker.goodness(i); });
    const size_t top = std::clamp<size_t>(size_t(std::ceil(maker.options().bestShare * double(n))), 1, n - 1);
    for (size_t draw = 0; draw < maker.draws() && !maker.full(); ++draw) {
        const size_t best = order[maker.uniform(top)];
        const size_t other = order[top + maker.uniform(n - top)];
        if (maker.passes(best, other))
            maker.add(best, other);
    }
    const std::string description = "each of the best " + std::to_string(top) + " against random ones of the other " +
                                    std::to_string(n - top) + " (of " + std::to_string(top * (n - top)) +
                                    " such pairs before the margin)";
    return maker.finish(description, top * (n - top), maker.extremeOf(order.front(), order.back()));
}

/// g-DPO's pairs: only inside a cluster, all of those passing the margin enumerated (a cluster holds
/// at most maxClusterSize, so they are at most n x maxClusterSize / 2), a random choice kept.
Result<MeasuredPairSet> clusterPairs(PairMaker& maker)
{
    const auto clusters = unionMaskClusters(maker.sequences(), maker.options().maxClusterSize);
    std::vector<std::pair<size_t, size_t>> inside;
    Extreme extreme;
    for (const auto& cluster : clusters)
        for (size_t a = 0; a < cluster.size(); ++a)
            for (size_t b = a + 1; b < cluster.size(); ++b) {
                if (maker.passes(cluster[a], cluster[b]))
                    inside.emplace_back(cluster[a], cluster[b]);
                else if (maker.difference(cluster[a], cluster[b]) > extreme.difference)
                    extreme = maker.extremeOf(cluster[a], cluster[b]);
            }
    if (std::none_of(clusters.begin(), clusters.end(), [](const auto& c) { return c.size() >= 2; }))
        return makeError("no two of the " + std::to_string(maker.sequences().size()) +
                         " measured sequences share a cluster (a cluster holds sequences of one length only)");
    // A random choice of the budget among them (a partial Fisher-Yates shuffle).
    const size_t keep = std::min(inside.size(), maker.options().budget);
    for (size_t i = 0; i < keep; ++i) {
        std::swap(inside[i], inside[i + maker.uniform(inside.size() - i)]);
        maker.add(inside[i].first, inside[i].second);
    }
    const std::string description = std::to_string(clusters.size()) +
                                    " clusters of sequences sharing a small union mask (at most " +
                                    std::to_string(maker.options().maxClusterSize) + " each), exactly " +
                                    std::to_string(inside.size()) + " pairs inside them past the margin";
    return maker.finish(description, inside.size(), extreme);
}

/// The family's consensus: the most common symbol at each position (the lowest byte on a tie).
std::string consensusOf(const std::vector<MeasuredSequence>& sequences, const std::vector<size_t>& members,
                        size_t length)
{
    std::string consensus(length, '\0');
    std::vector<std::array<uint32_t, 256>> counts(length);
    for (size_t i : members)
        for (size_t p = 0; p < length; ++p)
            ++counts[p][static_cast<unsigned char>(sequences[i].sequence[p])];
    for (size_t p = 0; p < length; ++p)
        consensus[p] = char(std::max_element(counts[p].begin(), counts[p].end()) - counts[p].begin());
    return consensus;
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
        const std::string consensus = consensusOf(sequences, members, length);
        std::vector<std::vector<uint32_t>> masks(members.size()); // by place in members
        for (size_t m = 0; m < members.size(); ++m)
            for (size_t p = 0; p < length; ++p)
                if (sequences[members[m]].sequence[p] != consensus[p])
                    masks[m].push_back(uint32_t(p));
        // Sorted by mask, so that sequences mutated at the same positions come together; a cluster
        // grows while its union mask stays within its seed's (first member's) mask plus the slack.
        std::vector<size_t> order(members.size());
        for (size_t m = 0; m < order.size(); ++m)
            order[m] = m;
        std::sort(order.begin(), order.end(),
                  [&](size_t a, size_t b) { return masks[a] < masks[b] || (masks[a] == masks[b] && a < b); });
        std::vector<char> inUnion(length, 0);
        std::vector<uint32_t> unionPositions;
        size_t allowed = 0;
        bool open = false;
        for (size_t m : order) {
            size_t fresh = 0;
            for (uint32_t p : masks[m])
                fresh += !inUnion[p];
            if (!open || out.back().size() >= maxClusterSize || unionPositions.size() + fresh > allowed) {
                for (uint32_t p : unionPositions)
                    inUnion[p] = 0;
                unionPositions.clear();
                allowed = masks[m].size() + kUnionMaskSlack;
                out.push_back({});
                open = true;
            }
            for (uint32_t p : masks[m])
                if (!inUnion[p]) {
                    inUnion[p] = 1;
                    unionPositions.push_back(p);
                }
            out.back().push_back(members[m]);
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
    if (sequences.size() >= (size_t(1) << 32))
        return makeError("pairs are made of at most 4,294,967,295 measured sequences");
    if (options.budget < 1)
        return makeError("the pair budget must be at least 1");
    if (!(options.k >= 0) || !(options.fixedMargin >= 0) || !std::isfinite(options.k) ||
        !std::isfinite(options.fixedMargin))
        return makeError("the margin and k must be finite and at least 0");
    if (options.strategy == PairStrategy::BestAgainstRest && !(options.bestShare > 0 && options.bestShare <= 1))
        return makeError("the best share must be above 0 and at most 1");
    if (options.strategy == PairStrategy::UnionMaskClusters && options.maxClusterSize < 2)
        return makeError("a cluster must hold at least 2 sequences for a pair");
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
