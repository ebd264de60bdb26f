// SPDX-License-Identifier: GPL-3.0-or-later
// One assay's values summarised per sequence: a sequence measured twice keeps both values and is
// used through their mean and the spread of that mean, the noise a pair's margin is set against.
#pragma once

#include <string>
#include <vector>

#include "assays/measurement.h"

namespace d2dpo {

/// One sequence's values in one assay, summarised: a sequence measured twice keeps both values and
/// is used through their mean and spread.
struct MeasuredSequence {
    std::string sequence;
    double mean = 0;
    double spread = 0; ///< the standard error of the mean
    int count = 0;     ///< values measured
};

/// One assay's measurements grouped by sequence, sorted by it (deterministic). spread: with two or
/// more values, their sample standard deviation over sqrt(count) (the replicates' own scatter,
/// which a lab's sd cannot understate); with one, its given sd over sqrt(replicates); else 0.
std::vector<MeasuredSequence> summariseMeasurements(const std::vector<Measurement>& measurements);

} // namespace d2dpo
