// SPDX-License-Identifier: GPL-3.0-or-later
// Training runs and their metric series: started, resumed, finished, and a dead process's run
// told from a live one. One facet of PreferenceStore (store/preferencestore.h); a caller that
// records or reads runs may take a RunLog&.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "store/records.h"
#include "store/storefacet.h"

namespace d2dpo {

class RunLog : protected StoreFacet {
public:
    Result<int64_t> startRun(const RunRecord& run);
    Status appendMetrics(int64_t runId, int64_t step, const std::map<std::string, double>& values);
    /// Many points in one transaction (a training run flushes its buffered series this way).
    Status appendMetrics(int64_t runId, const std::vector<MetricPoint>& points);
    Status finishRun(int64_t runId, RunStatus status, const std::string& error, const std::string& resultModelId);
    /// A stopped or interrupted run running again (resumed) from `fromStep`, now alive under
    /// `lockPath`; the metric points the dead attempt recorded after that step are dropped, so the
    /// curves hold one attempt.
    Status reopenRun(int64_t runId, const std::string& lockPath, int64_t fromStep);
    Result<std::vector<RunRecord>> runs();
    Result<std::optional<RunRecord>> run(int64_t id);
    /// (step, value) of one metric of one run, by step.
    Result<std::vector<std::pair<int64_t, double>>> metricSeries(int64_t runId, const std::string& name);
    /// Marks running runs whose lock no process holds as interrupted; returns how many.
    Result<int64_t> markDeadRunsInterrupted();

protected:
    using StoreFacet::StoreFacet;
};

} // namespace d2dpo
