// SPDX-License-Identifier: GPL-3.0-or-later
// How close each sample is to the training data: its identity to the nearest training sequence,
// a novel-but-plausible measure (1 = a copy of the data, low = nothing like it). Identity is the
// share of equal positions, position by position over the longer of the two (a position only one
// of them reaches counts as unequal), with trailing pads dropped. No alignment: the task lays
// every sequence on one grid and the model writes position p as position p, so a shifted copy is
// a different sequence to it (and one alignment per pair would cost samples x training DP tables).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace d2dpo {

struct NearestIdentity {
    std::vector<double> identity; ///< per sample: identity to its nearest training sequence
    std::vector<int64_t> nearest; ///< per sample: the index of that training sequence (-1 without data)
    double mean = 0.0;
    double median = 0.0;
    int64_t copies = 0; ///< samples identical to a training sequence (identity 1)
    /// Counts of the identities in equal bins over [0, 1]; 1 falls in the last bin.
    std::vector<int64_t> histogram;

    /// The lower edge of bin `bin` (bins are [i / bins, (i + 1) / bins)).
    double binStart(int64_t bin) const { return double(bin) / double(histogram.size()); }
};

/// Identity of two texts as above; two empty texts are identical (1).
double positionIdentity(const std::string& first, const std::string& second);

/// The nearest training sequence of each sample (the first of equals). With no training
/// sequences every identity is 0 and every index -1. `bins` is the histogram's bin count.
/// Through an index of (position, character) -> training sequences: 2000 samples against 44,000
/// words in about 60 ms, against 45 sequences of length 1000 in about 30 ms.
NearestIdentity nearestTrainingIdentity(const std::vector<std::string>& samples,
                                        const std::vector<std::string>& training, int bins = 10);

} // namespace d2dpo
