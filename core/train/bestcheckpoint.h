// SPDX-License-Identifier: GPL-3.0-or-later
// Which evaluation of a run is its best (DpoScheduleConfig::keepBest): the highest value of a chosen metric
// (the lowest with a leading '-'; "rule" names the task's rule share) among the evaluations whose
// VSR stays within a slack of the reference's, so that a run that buys alignment with broken
// sequences never counts as best. Plain bookkeeping; the trainer writes the checkpoint.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/samplemetrics.h"

namespace d2dpo {

class BestCheckpoint {
public:
    /// `choice` as DpoScheduleConfig::keepBest ("" keeps nothing).
    BestCheckpoint(std::string choice, double vsrSlack, double referenceVsr);

    bool enabled() const { return !m_choice.empty(); }
    /// Whether the evaluation at `step` is the best so far (it then becomes the best).
    bool offer(int64_t step, const SampleMetrics& metrics);

    std::optional<int64_t> bestStep() const { return m_bestStep; }
    /// "step 150: odd_ratio 0.9735, VSR 0.9810 (>= 0.9580 required)", or why there is none.
    std::string describe() const;

private:
    std::string m_choice;
    double m_vsrFloor;
    std::optional<int64_t> m_bestStep;
    std::string m_metric; ///< the resolved name
    double m_bestValue = 0;
    double m_bestVsr = 0;
    int64_t m_offered = 0;
};

} // namespace d2dpo
