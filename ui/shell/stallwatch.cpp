// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/shell/stallwatch.h"

#include <QTimer>

namespace d2dpo::ui {

namespace {
constexpr int kTickMs = 10;
}

StallWatch::StallWatch(const QString& logPath, double thresholdMs, std::function<QString()> context, QObject* parent)
    : QObject(parent)
    , m_log(std::fopen(logPath.toLocal8Bit().constData(), "a"))
    , m_thresholdMs(thresholdMs)
    , m_context(std::move(context))
    , m_timer(new QTimer(this))
{
    if (!m_log)
        return;
    std::setvbuf(m_log, nullptr, _IOLBF, 0); // each line on disk at once: a killed window keeps its log
    std::fprintf(m_log, "# window-thread stalls over %.0f ms (late ticks of a %d ms timer)\n", m_thresholdMs, kTickMs);
    m_timer->setTimerType(Qt::PreciseTimer);
    connect(m_timer, &QTimer::timeout, this, &StallWatch::tick);
    m_clock.start();
    m_timer->start(kTickMs);
}

StallWatch::~StallWatch()
{
    if (!m_log)
        return;
    std::fprintf(m_log, "# %.1f s watched, %lld ticks, %lld stalls over %.0f ms, %lld over 50 ms, longest %.0f ms\n",
                 double(m_clock.elapsed()) / 1000.0, m_ticks, m_stalls, m_thresholdMs, m_over50Ms, m_longestMs);
    std::fclose(m_log);
}

void StallWatch::tick()
{
    const qint64 now = m_clock.nsecsElapsed();
    // The gap between two ticks, less the tick's own period: how late the window's thread was. The
    // first counts from the watch's start: a window shown before its event loop runs is a stall too.
    const double lateMs = double(now - m_lastNs) / 1e6 - kTickMs;
    m_lastNs = now;
    ++m_ticks;
    m_longestMs = std::max(m_longestMs, lateMs);
    if (lateMs > 50)
        ++m_over50Ms;
    if (lateMs <= m_thresholdMs)
        return;
    ++m_stalls;
    std::fprintf(m_log, "%9.3f s  stall %6.0f ms  %s\n", double(now) / 1e9, lateMs,
                 m_context ? qPrintable(m_context()) : "");
}

} // namespace d2dpo::ui
