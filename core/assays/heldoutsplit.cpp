// SPDX-License-Identifier: GPL-3.0-or-later
#include "assays/heldoutsplit.h"

#include <algorithm>
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

double spearman(const std::vector<double>& a, const std::vector<double>& b)
{
    if (a.size() != b.size() || a.size() < 2)
        return std::numeric_limits<double>::quiet_NaN();
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
