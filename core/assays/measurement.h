// SPDX-License-Identifier: GPL-3.0-or-later
// One measured value of one sequence in one assay, as a lab's file gives it, and which way an
// assay's values are better. Plain structs: the store, the pairs and the views all read them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace d2dpo {

/// Which of two values of an assay is the better: a pair's winner is chosen by it.
enum class AssayDirection { HigherIsBetter, LowerIsBetter };

/// One measured value of one sequence in one assay, as read from a file.
struct Measurement {
    std::string sequence;     ///< in the task's symbols, one character per position
    std::string assay;        ///< what was measured ("stability", "fluorescence")
    double value = 0;
    std::optional<double> sd; ///< the value's standard deviation, when the file gives one
    int replicates = 1;       ///< how many replicates the value is the mean of
    int64_t line = 0;         ///< 1-based line of its file, for messages
};

} // namespace d2dpo
