// SPDX-License-Identifier: GPL-3.0-or-later
// A past run as the Train view draws it: its record, the metrics its task declares, and every
// series the plots show, read in one go off the window's thread (each read is a round trip on a
// team store, and a followed run is read again at every step it makes).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/samplemetrics.h"
#include "store/records.h"

namespace d2dpo {
class PreferenceStore;
}

namespace d2dpo::ui {

struct StoredRun {
    int64_t runId = 0;
    std::optional<RunRecord> run; ///< empty: not in the store (or the store could not be read: `error`)
    std::string error;
    SampleMetrics declared;       ///< what its reference model's task measures
    std::map<std::string, std::vector<std::pair<int64_t, double>>> series; ///< (step, value) by metric name
};

/// Reads run `runId` and the series TrainPlots::showStoredRun draws. Any thread; the store's
/// connection must be this thread's alone while it reads.
StoredRun readStoredRun(PreferenceStore& store, int64_t runId);

} // namespace d2dpo::ui
