// SPDX-License-Identifier: GPL-3.0-or-later
// Shows a run on the terminal: a progress bar per phase with the loss (and the reward margin
// during D2-DPO), one line per evaluation, and a bar of its samples while a long one is drawn.
#pragma once

#include <functional>
#include <memory>

#include "research/experiment.h"
#include "cli/progressbar.h"

namespace d2dpo::cli {

class ConsoleListener final : public PhaseListener {
public:
    void onPhase(const std::string& phase, int64_t totalSteps) override;
    void onProgress(const ProgressEvent& e) override;
    void onEvaluation(const EvaluationEvent& e) override;
    void onEvaluationProgress(double drawn, int64_t total) override;
    void onCheckpoint(const CheckpointEvent& e) override;
    void onFinished(const FinishedEvent& e) override;
    void onLog(const std::string& line) override;

private:
    std::string detail() const;

    std::unique_ptr<ProgressBar> m_bar;
    bool m_logsOnly = false; ///< a phase whose steps are said as log lines (an import), not as a bar
    ProgressEvent m_last;
    std::function<void(double, int64_t)> m_evaluationBar; ///< the evaluation being drawn (samplingProgress)
};

} // namespace d2dpo::cli
