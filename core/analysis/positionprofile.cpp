// SPDX-License-Identifier: GPL-3.0-or-later
#include "analysis/positionprofile.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace d2dpo {

namespace {

/// The index of each byte in `symbols`, -1 for the rest: one lookup per character counted.
std::array<int, 256> indexOf(const std::string& symbols)
{
    std::array<int, 256> index;
    index.fill(-1);
    for (size_t k = 0; k < symbols.size(); ++k)
        index[static_cast<unsigned char>(symbols[k])] = int(k);
    return index;
}

/// The length of `text` without its trailing pads.
int64_t unpaddedLength(const std::string& text)
{
    const size_t end = text.find_last_not_of('.');
    return end == std::string::npos ? 0 : int64_t(end + 1);
}

} // namespace

double entropyBits(const std::vector<int64_t>& counts)
{
    int64_t total = 0;
    for (int64_t c : counts)
        total += c;
    if (total <= 0)
        return 0.0;
    double h = 0.0;
    for (int64_t c : counts) {
        if (c <= 0)
            continue;
        const double f = double(c) / double(total);
        h -= f * std::log2(f);
    }
    return std::max(0.0, h); // -0.0 and rounding below zero for a constant column
}

double smallSampleCorrection(int64_t symbols, int64_t n)
{
    if (n <= 0 || symbols <= 1)
        return 0.0;
    return double(symbols - 1) / (2.0 * std::log(2.0) * double(n));
}

int64_t PositionProfile::residues(int64_t position) const
{
    int64_t n = 0;
    for (int64_t k = 0; k < symbolCount(); ++k)
        n += count(position, k);
    return n;
}

double PositionProfile::frequency(int64_t position, int64_t symbol) const
{
    const int64_t n = residues(position);
    return n > 0 ? double(count(position, symbol)) / double(n) : 0.0;
}

double PositionProfile::maxBits() const { return symbols.size() > 1 ? std::log2(double(symbols.size())) : 0.0; }

std::vector<double> PositionProfile::composition() const
{
    std::vector<double> shares(symbols.size(), 0.0);
    double total = 0.0;
    for (int64_t p = 0; p < length(); ++p)
        for (int64_t k = 0; k < symbolCount(); ++k) {
            shares[size_t(k)] += double(count(p, k));
            total += double(count(p, k));
        }
    if (total > 0)
        for (double& s : shares)
            s /= total;
    return shares;
}

PositionProfile profilePositions(const std::vector<std::string>& sequences, const std::string& symbols, int64_t length)
{
    for (const std::string& s : sequences)
        length = std::max(length, unpaddedLength(s));
    const auto index = indexOf(symbols);
    const auto k = int64_t(symbols.size());

    PositionProfile profile;
    profile.symbols = symbols;
    profile.sequences = int64_t(sequences.size());
    profile.counts.assign(size_t(length * k), 0);
    profile.others.assign(size_t(length), 0);
    std::vector<int64_t> endedCount(size_t(length), 0);
    for (const std::string& s : sequences) {
        const int64_t end = unpaddedLength(s);
        for (int64_t p = 0; p < end; ++p) {
            const int symbol = index[static_cast<unsigned char>(s[size_t(p)])];
            if (symbol >= 0)
                ++profile.counts[size_t(p * k + symbol)];
            else
                ++profile.others[size_t(p)];
        }
        for (int64_t p = end; p < length; ++p)
            ++endedCount[size_t(p)];
    }

    profile.ended.resize(size_t(length));
    profile.entropy.resize(size_t(length));
    profile.correction.resize(size_t(length));
    profile.information.resize(size_t(length));
    const double maxBits = profile.maxBits();
    std::vector<int64_t> column(static_cast<size_t>(k));
    for (int64_t p = 0; p < length; ++p) {
        std::copy_n(profile.counts.begin() + p * k, k, column.begin());
        const int64_t n = profile.residues(p);
        profile.ended[size_t(p)] = sequences.empty() ? 0.0 : double(endedCount[size_t(p)]) / double(sequences.size());
        profile.entropy[size_t(p)] = entropyBits(column);
        profile.correction[size_t(p)] = smallSampleCorrection(k, n);
        // A position no sequence reaches holds no information (not log2 K of it).
        const double bits = maxBits - profile.entropy[size_t(p)] - profile.correction[size_t(p)];
        profile.information[size_t(p)] = n > 0 ? std::clamp(bits, 0.0, maxBits) : 0.0;
    }
    return profile;
}

} // namespace d2dpo
