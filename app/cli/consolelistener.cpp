// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/consolelistener.h"

#include <cstdio>
#include <unistd.h>

#include "cli/common.h"

namespace d2dpo::cli {

void ConsoleListener::onPhase(const std::string& phase, int64_t totalSteps)
{
    if (m_bar)
        m_bar->finish(detail());
    m_logsOnly = phase == "import";
    if (m_logsOnly)
        totalSteps = 0;
    m_bar = totalSteps > 0 ? std::make_unique<ProgressBar>(phase, totalSteps) : nullptr;
    m_last = {};
    if (!m_bar)
        std::fprintf(stderr, "%s ...\n", phase.c_str());
}

std::string ConsoleListener::detail() const
{
    char buffer[96];
    if (m_last.rewards)
        std::snprintf(buffer, sizeof buffer, "loss %.4f margin %+.3f", m_last.loss, m_last.rewards->margins);
    else
        std::snprintf(buffer, sizeof buffer, "loss %.4f", m_last.loss);
    return buffer;
}

void ConsoleListener::onProgress(const ProgressEvent& e)
{
    if (m_logsOnly)
        return;
    if (!m_bar)
        m_bar = std::make_unique<ProgressBar>("train", e.totalSteps);
    m_last = e;
    m_bar->update(e.step, detail());
}

namespace {

// On a terminal, clear the progress bar's line before printing over it.
const char* lineStart() { return isatty(STDERR_FILENO) ? "\r\033[K" : ""; }

} // namespace

void ConsoleListener::onEvaluation(const EvaluationEvent& e)
{
    if (e.ofReference)
        std::fprintf(stderr, "%s  reference:         %s\n", lineStart(), formatMetrics(e.metrics).c_str());
    else
        std::fprintf(stderr, "%s  eval @ step %5lld: %s\n", lineStart(), static_cast<long long>(e.step),
                     formatMetrics(e.metrics).c_str());
}

void ConsoleListener::onEvaluationProgress(double drawn, int64_t total)
{
    if (!m_evaluationBar) // a bar once the draw has lasted a second (a small model's never shows)
        m_evaluationBar = samplingProgress("evaluate");
    m_evaluationBar(drawn, total);
    if (drawn >= double(total))
        m_evaluationBar = nullptr;
}

void ConsoleListener::onLog(const std::string& line)
{
    std::fprintf(stderr, "%s%s\n", lineStart(), line.c_str());
}

void ConsoleListener::onCheckpoint(const CheckpointEvent& e)
{
    std::fprintf(stderr, "%s  checkpoint @ step %lld: %s\n", lineStart(), static_cast<long long>(e.step),
                 e.path.c_str());
}

void ConsoleListener::onFinished(const FinishedEvent& e)
{
    if (m_bar && m_last.step > 0) // a run refused before its first step draws no empty bar
        m_bar->finish(detail());
    m_bar.reset();
    if (e.status != RunStatus::Completed)
        std::fprintf(stderr, "run %s after %lld steps%s%s\n", toString(e.status), static_cast<long long>(e.stepsDone),
                     e.error.empty() ? "" : ": ", e.error.c_str());
}

} // namespace d2dpo::cli
