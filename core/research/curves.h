// SPDX-License-Identifier: GPL-3.0-or-later
// Write an experiment's curves for plotting elsewhere: CSV files (one row per step or
// evaluation) and one JSON report with the configuration, timings and every series.
#pragma once

#include <string>

#include "research/experiment.h"

namespace d2dpo {

/// Writes pretrain.csv, d2dpo.csv, evaluations.csv and report.json into `folder`.
Status writeCurves(const std::string& folder, const ReproduceReport& report);

std::string reportToJson(const ReproduceReport& report);

} // namespace d2dpo
