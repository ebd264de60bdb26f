// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/progressbar.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <unistd.h>

#include "base/timeutil.h"

namespace d2dpo::cli {

ProgressBar::ProgressBar(std::string label, int64_t total, std::chrono::steady_clock::time_point started)
    : m_label(std::move(label))
    , m_total(std::max<int64_t>(1, total))
    , m_terminal(isatty(STDERR_FILENO) != 0)
    , m_start(started)
    , m_lastDraw(m_start)
{
}

std::string ProgressBar::formatDuration(double seconds)
{
    if (!(seconds >= 0) || seconds > 1e7)
        return "--:--";
    const auto s = static_cast<long long>(seconds + 0.5);
    char buffer[32];
    if (s >= 3600)
        std::snprintf(buffer, sizeof buffer, "%lld:%02lld:%02lld", s / 3600, (s / 60) % 60, s % 60);
    else
        std::snprintf(buffer, sizeof buffer, "%02lld:%02lld", s / 60, s % 60);
    return buffer;
}

void ProgressBar::update(double done, const std::string& detail)
{
    m_lastDone = done;
    const auto now = std::chrono::steady_clock::now();
    const int decile = int(10 * std::min(done, double(m_total)) / double(m_total));
    if (m_terminal) {
        if (now - m_lastDraw < std::chrono::milliseconds(100) && done < m_total)
            return;
    } else if (decile == m_lastDecile || done >= m_total) {
        return;
    }
    m_lastDecile = decile;
    m_lastDraw = now;
    draw(done, detail, false);
}

void ProgressBar::finish(const std::string& detail)
{
    if (m_finished)
        return;
    m_finished = true;
    draw(m_lastDone, detail, true);
}

void ProgressBar::draw(double done, const std::string& detail, bool final)
{
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    const double fraction = std::clamp(done / double(m_total), 0.0, 1.0);
    const double rate = elapsed > 0 ? done / elapsed : 0;
    const double eta = secondsLeft(elapsed, done, m_total);
    constexpr int width = 24;
    const int filled = int(fraction * width + 0.5);
    std::string bar(size_t(filled), '#');
    bar.resize(width, '.');
    std::fprintf(stderr, "%s%-10s [%s] %3.0f%% %lld/%lld  %.1f/s  %s %s  %s%s", m_terminal ? "\r\033[K" : "",
                 m_label.c_str(), bar.c_str(), 100 * fraction, static_cast<long long>(done),
                 static_cast<long long>(m_total), rate, final ? "took" : "ETA",
                 formatDuration(final ? elapsed : eta).c_str(), detail.c_str(), (final || !m_terminal) ? "\n" : "");
    std::fflush(stderr);
}

std::function<void(double, int64_t)> samplingProgress(const std::string& label)
{
    struct Draw {
        std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
        std::unique_ptr<ProgressBar> bar;
    };
    auto draw = std::make_shared<Draw>();
    return [draw, label](double done, int64_t total) {
        if (!draw->bar) {
            if (std::chrono::steady_clock::now() - draw->start < std::chrono::seconds(1))
                return;
            draw->bar = std::make_unique<ProgressBar>(label, total, draw->start);
        }
        draw->bar->update(done);
        if (done >= double(total))
            draw->bar->finish();
    };
}

} // namespace d2dpo::cli
