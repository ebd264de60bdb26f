// SPDX-License-Identifier: GPL-3.0-or-later
// A job that reports phases (pretraining, an import) run as a training job in a TrainRunner
// (docs/architecture.md): its progress and log lines pass on to the runner's listener, and a phase that
// has no steps to count is said as a log line, so a dialog can show a busy bar for it.
#pragma once

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

private:
    TrainListener& m_to;
};

} // namespace d2dpo::ui
