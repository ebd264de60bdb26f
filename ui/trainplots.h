// SPDX-License-Identifier: GPL-3.0-or-later
// The Train view's four live plots of one run: the D2-DPO loss with its moving average; the odd
// ratio and VSR of samples against the reference's (as baselines); reward accuracy and margin;
// chosen and rejected rewards. They take the worker's events as they arrive, or a past run's
// series as the store recorded them.
#pragma once

#include <QWidget>

#include <cstdint>

#include "store/preferencestore.h"
#include "ui/traintypes.h"

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
    /// The samples' odd ratio and VSR at a step; the reference's become the baselines.
    void addEvaluation(const EvaluationEvent& event);
    /// Replaces the curves with the series the store recorded for a run; the x axes span its
    /// last loss step.
    void showStoredRun(PreferenceStore& store, qint64 runId);

private:
    /// The loss and its moving average.
    void appendLoss(int64_t step, double loss);

    MetricPlot* m_lossPlot = nullptr;
    MetricPlot* m_samplePlot = nullptr;
    MetricPlot* m_accuracyPlot = nullptr;
    MetricPlot* m_rewardPlot = nullptr;
    double m_lossAverage = 0;
    bool m_haveAverage = false;
};

} // namespace d2dpo::ui
