// SPDX-License-Identifier: GPL-3.0-or-later
// A terminal progress bar with rate and ETA on stderr. On a terminal it redraws one line; when
// stderr is a file or pipe it prints a plain line every ~10% so logs stay readable.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace d2dpo::cli {

class ProgressBar {
public:
    /// `started`: when the work began, if before the bar (its rate and time left count from then).
    ProgressBar(std::string label, int64_t total,
                std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now());
    /// `done` of `total` units finished, a fraction of one too (a sample whose passes are under way:
    /// the time left shows before the first whole one); `detail` is shown after the bar (e.g. the loss).
    void update(double done, const std::string& detail = {});
    /// Draws the final state and ends the line.
    void finish(const std::string& detail = {});

    static std::string formatDuration(double seconds);

private:
    void draw(double done, const std::string& detail, bool final);

    std::string m_label;
    int64_t m_total;
    bool m_terminal;
    std::chrono::steady_clock::time_point m_start;
    std::chrono::steady_clock::time_point m_lastDraw;
    int m_lastDecile = -1;
    double m_lastDone = 0;
    bool m_finished = false;
};

/// What `sample`, `eval`, `import` and `pretrain` hand the sampler: a bar over the draw's samples
/// once it has run for a second (a long draw is never silent, a quick one prints nothing), sized by
/// the total the draw reports (a count fitted to a time is known only once the draw starts).
std::function<void(double done, int64_t total)> samplingProgress(const std::string& label);

} // namespace d2dpo::cli
