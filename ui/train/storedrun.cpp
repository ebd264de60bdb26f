// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/train/storedrun.h"

#include "base/metricnames.h"
#include "facades/taskinfo.h"
#include "store/preferencestore.h"

namespace d2dpo::ui {

StoredRun readStoredRun(PreferenceStore& store, int64_t runId)
{
    StoredRun read;
    read.runId = runId;
    auto record = store.run(runId);
    if (!record || !record->has_value()) {
        read.error = record ? std::string() : record.error();
        return read;
    }
    read.run = *record.value();
    // The run's task (from its reference model) says which sample metrics it recorded.
    if (auto reference = store.model(read.run->referenceModelId); reference && reference->has_value())
        if (auto task = TaskInfo::ofModel(store, *reference.value()))
            read.declared = task->declaredMetrics();
    std::vector<std::string> names{metric::kLoss, metric::kRewardsAccuracies, metric::kRewardsMargins,
                                   metric::kRewardsChosen, metric::kRewardsRejected};
    for (const MetricValue& v : read.declared.values)
        if (v.plotted) {
            names.push_back(v.name);
            names.push_back(metric::ofReference(v.name));
        }
    for (const std::string& name : names)
        if (auto points = store.metricSeries(runId, name))
            read.series[name] = std::move(points.value());
    return read;
}

} // namespace d2dpo::ui
