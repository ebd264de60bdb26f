// SPDX-License-Identifier: GPL-3.0-or-later
// What a batch of generated sequences says about a model on an integer-valued task:
// validity, the odd-integer preference, and how diverse the valid samples are.
// Plain struct (no torch) so the UI and the store can hold it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace d2dpo {

struct SampleMetrics {
    int64_t samples = 0;
    double vsr = 0;            ///< valid-sample ratio: share of samples that decode to some value
    double oddRatio = 0;       ///< share of ALL samples that are valid and odd (the paper's figure)
    double oddShareValid = 0;  ///< share of valid samples that are odd
    double tvFromOddUniform = 0; ///< total variation of the valid histogram from uniform over odd values
    double entropy = 0;        ///< entropy (nats) of the valid samples' histogram over values
    std::vector<int64_t> histogram; ///< count per value 0..maxValue
    int64_t invalid = 0;       ///< the "invalid" bin

    std::string toJson() const;
};

/// Metrics from decoded values (-1 = invalid) for a task whose values are 0..maxValue.
SampleMetrics computeSampleMetrics(const std::vector<int64_t>& decoded, int64_t maxValue);

} // namespace d2dpo
