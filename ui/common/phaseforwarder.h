// SPDX-License-Identifier: GPL-3.0-or-later
// A job that reports phases (pretraining, an import) run as a training job in a TrainRunner
// (docs/architecture.md): its progress and log lines pass on to the runner's listener, and a phase that
// has no steps to count is said as a log line, so a dialog can show a busy bar for it.
#pragma once

#include <cmath>
#include <string>

#include "base/trainlistener.h"

namespace d2dpo::ui {

class PhaseForwarder final : public PhaseListener {
public:
    /// The log line a step-less phase is announced with: "<phase>…".
    static std::string phaseLine(const std::string& phase) { return phase + "…"; }

    explicit PhaseForwarder(TrainListener& to) : m_to(to) {}
    void onPhase(const std::string& phase, int64_t totalSteps) override
    {
        if (totalSteps == 0)
            m_to.onLog(phaseLine(phase));
    }
    void onProgress(const ProgressEvent& e) override { m_to.onProgress(e); }
    void onLog(const std::string& line) override { m_to.onLog(line); }

    /// An evaluation's progress in hundredths of a sample (its passes move it within a batch), as a
    /// step count: so a dialog's bar and its time left move from the first passes of a large model.
    static constexpr int64_t kStepsPerSample = 100;
    void onSamplingProgress(double drawn, int64_t total)
    {
        ProgressEvent e;
        e.step = std::llround(drawn * double(kStepsPerSample));
        e.totalSteps = total * kStepsPerSample;
        m_to.onProgress(e);
    }

private:
    TrainListener& m_to;
};

} // namespace d2dpo::ui
