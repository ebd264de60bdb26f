// SPDX-License-Identifier: GPL-3.0-or-later
// The study's figures: one PNG per metric, a line per setting (the mean over seeds) with a band of
// one standard deviation, drawn with QCustomPlot on Qt's offscreen platform (no display needed).
// Without the desktop build (no Qt) it says so and writes nothing.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "research/study.h"

namespace d2dpo::cli {

/// Writes <folder>/<metric>.png for each metric in `metrics` that the results hold, the curves'
/// x axis named `xLabel`; returns the paths.
Result<std::vector<std::string>> plotStudy(const StudyResults& results, const std::vector<std::string>& metrics,
                                           const std::string& folder, const std::string& xLabel = "D2-DPO step");

} // namespace d2dpo::cli
