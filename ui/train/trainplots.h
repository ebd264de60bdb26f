// SPDX-License-Identifier: GPL-3.0-or-later
// The Train view's four live plots of one run: the D2-DPO loss with its moving average; the task's
// plotted sample metrics (VSR, the rule's share...) against the reference's (as baselines);
// reward accuracy and margin;
// chosen and rejected rewards. They take the worker's events as they arrive, or a past run's
// series as the store recorded them.
#pragma once

#include <QWidget>

#include <cstdint>

#include "ui/train/storedrun.h"
#include "ui/train/traintypes.h"

namespace d2dpo::ui {

class MetricPlot;

class TrainPlots final : public QWidget {
    Q_OBJECT

public:
    explicit TrainPlots(QWidget* parent = nullptr);

    MetricPlot* lossPlot() const { return m_lossPlot; }
    MetricPlot* samplePlot() const { return m_samplePlot; }
    MetricPlot* accuracyPlot() const { return m_accuracyPlot; }
    MetricPlot* rewardPlot() const { return m_rewardPlot; }

    void clear();
    /// The plots' x axes span the run's steps.
    void setStepRange(int64_t steps);
    /// One training step: its loss (and the moving average) and, when measured, its rewards.
    void addProgress(const ProgressEvent& event);
    /// The task's plotted sample metrics at a step (VSR, the rule's share...); the reference's
    /// become the baselines. The first evaluation of a run sets up the series.
    void addEvaluation(const EvaluationEvent& event);
    /// The series of the sample plot: one per metric the task plots, in its order.
    void setSampleMetrics(const SampleMetrics& declared);
    QStringList sampleSeriesNames() const { return m_sampleNames; }
    /// Replaces the curves with the series the store recorded for a run (read by readStoredRun);
    /// the x axes span its last loss step.
    void showStoredRun(const StoredRun& stored);

private:
    /// The loss and its moving average.
    void appendLoss(int64_t step, double loss);

    MetricPlot* m_lossPlot = nullptr;
    MetricPlot* m_samplePlot = nullptr;
    MetricPlot* m_accuracyPlot = nullptr;
    MetricPlot* m_rewardPlot = nullptr;
    QStringList m_sampleNames;
    double m_lossAverage = 0;
    bool m_haveAverage = false;
};

} // namespace d2dpo::ui
