// SPDX-License-Identifier: GPL-3.0-or-later
#include "assays/heldoutsplit.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <cmath>
#include <limits>
#include <numeric>

namespace d2dpo {

namespace {

/// SplitMix64's finaliser over FNV-1a: a hash whose low and high bits are both well mixed.
uint64_t mixed(const std::string& text, uint64_t seed)
{
    uint64_t h = 1469598103934665603ull ^ seed;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

std::vector<double> ranks(const std::vector<double>& values)
{
    std::vector<size_t> order(values.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
    std::vector<double> out(values.size());
    for (size_t i = 0; i < order.size();) {
        size_t j = i;
        while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]])
            ++j;
        for (size_t k = i; k <= j; ++k)
            out[order[k]] = (double(i) + double(j)) / 2.0 + 1.0;
        i = j + 1;
    }
    return out;
}

} // namespace

bool isHeldOut(const std::string& sequence, double share, uint64_t seed)
{
    if (share <= 0)
        return false;
    return double(mixed(sequence, seed) >> 11) * 0x1.0p-53 < share;
}

const char* toString(SplitKind kind)
{
    switch (kind) {
    case SplitKind::Random: return "random";
    case SplitKind::Position: return "position";
    case SplitKind::Mutations: return "mutations";
    }
    return "random";
}

Result<SplitKind> splitKindNamed(const std::string& name)
{
    for (SplitKind kind : {SplitKind::Random, SplitKind::Position, SplitKind::Mutations})
        if (name == toString(kind))
            return kind;
    return makeError("the held-out split is random (a share of the sequences), position (the sequences that "
                     "mutate a share of the positions) or mutations (those with the most mutations), not '" +
                     name.substr(0, 40) + "'");
}

std::string consensusOf(const std::vector<std::string>& sequences)
{
    size_t length = 0;
    for (const std::string& s : sequences)
        length = std::max(length, s.size());
    std::string out(length, '\0');
    std::vector<std::array<size_t, 256>> counts(length);
    for (auto& c : counts)
        c.fill(0);
    for (const std::string& s : sequences)
        for (size_t i = 0; i < s.size(); ++i)
            ++counts[i][static_cast<unsigned char>(s[i])];
    for (size_t i = 0; i < length; ++i)
        out[i] = char(std::max_element(counts[i].begin(), counts[i].end()) - counts[i].begin());
    return out;
}

namespace {

/// The positions where `s` differs from `consensus` (one past its end counts as differing).
std::vector<size_t> mutatedPositions(const std::string& s, const std::string& consensus)
{
    std::vector<size_t> out;
    for (size_t i = 0; i < consensus.size(); ++i)
        if (i >= s.size() || s[i] != consensus[i])
            out.push_back(i);
    return out;
}

} // namespace

Result<std::vector<bool>> heldOutFlags(const std::vector<std::string>& sequences, SplitKind kind, double share,
                                       uint64_t seed)
{
    std::vector<bool> out(sequences.size(), false);
    if (share <= 0 || sequences.empty())
        return out;
    if (kind == SplitKind::Random) {
        for (size_t i = 0; i < sequences.size(); ++i)
            out[i] = isHeldOut(sequences[i], share, seed);
        return out;
    }
    const std::string consensus = consensusOf(sequences);
    std::vector<std::vector<size_t>> mutated;
    mutated.reserve(sequences.size());
    for (const std::string& s : sequences)
        mutated.push_back(mutatedPositions(s, consensus));
    if (kind == SplitKind::Position) {
        // A position is held out by the hash of its number, as a sequence is in the random split.
        bool any = false;
        for (size_t i = 0; i < sequences.size(); ++i)
            for (size_t position : mutated[i])
                if (isHeldOut("position " + std::to_string(position), share, seed)) {
                    out[i] = any = true;
                    break;
                }
        if (!any)
            return makeError("the position split holds out no sequence: no mutated position fell in the share (a "
                             "larger --held-out or another --split-seed)");
        if (std::all_of(out.begin(), out.end(), [](bool held) { return held; }))
            return makeError("the position split holds out every sequence: each mutates a held-out position (a "
                             "smaller --held-out or another --split-seed)");
        return out;
    }
    std::map<size_t, size_t, std::greater<>> sequencesWithCount;
    for (const auto& m : mutated)
        ++sequencesWithCount[m.size()];
    if (sequencesWithCount.size() < 2)
        return makeError("the mutation-count split needs sequences of at least two mutation counts (against the "
                         "consensus); every sequence here has " + std::to_string(sequencesWithCount.begin()->first));
    // Whole counts from the highest down while they fit in the share, the highest always (so that
    // the held-out sequences have more mutations than any the model trains on).
    size_t threshold = sequencesWithCount.begin()->first, taken = 0;
    for (const auto& [count, number] : sequencesWithCount) {
        if (taken > 0 && double(taken + number) > share * double(sequences.size()))
            break;
        if (count == sequencesWithCount.rbegin()->first)
            break; // never the lowest count: something must be left to train on
        threshold = count;
        taken += number;
    }
    for (size_t i = 0; i < sequences.size(); ++i)
        out[i] = mutated[i].size() >= threshold;
    return out;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b)
{
    const auto finite = [](double v) { return std::isfinite(v); };
    if (a.size() != b.size() || a.size() < 2 || !std::all_of(a.begin(), a.end(), finite) ||
        !std::all_of(b.begin(), b.end(), finite))
        return std::numeric_limits<double>::quiet_NaN(); // a NaN would break the sort of the ranks
    const std::vector<double> ra = ranks(a), rb = ranks(b);
    const double mean = (double(a.size()) + 1) / 2;
    double sab = 0, saa = 0, sbb = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        sab += (ra[i] - mean) * (rb[i] - mean);
        saa += (ra[i] - mean) * (ra[i] - mean);
        sbb += (rb[i] - mean) * (rb[i] - mean);
    }
    if (saa == 0 || sbb == 0)
        return std::numeric_limits<double>::quiet_NaN();
    return sab / std::sqrt(saa * sbb);
}

} // namespace d2dpo
