// SPDX-License-Identifier: GPL-3.0-or-later
// Watches the window's thread for stalls, as a user would feel them: a 10 ms timer on that thread
// ticks, and a tick that comes late by more than the threshold is a stall, written to a log with
// the time and what the window said then (its status line). At the end the log gets a summary
// line: ticks, stalls over the threshold and over 50 ms, and the longest. `d2dpo-studio
// --stall-log FILE` turns it on (bench/newuserloop.sh reads it).
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>

#include <cstdio>
#include <functional>

class QTimer;

namespace d2dpo::ui {

class StallWatch final : public QObject {
    Q_OBJECT
public:
    /// Appends to `logPath`; `context` says what the window showed (called after a stall).
    StallWatch(const QString& logPath, double thresholdMs, std::function<QString()> context, QObject* parent = nullptr);
    ~StallWatch() override; ///< writes the summary

    bool isOpen() const { return m_log != nullptr; }
    double longestMs() const { return m_longestMs; }

private:
    void tick();

    std::FILE* m_log = nullptr;
    double m_thresholdMs;
    std::function<QString()> m_context;
    QTimer* m_timer;
    QElapsedTimer m_clock;
    qint64 m_lastNs = 0;
    qint64 m_ticks = 0;
    qint64 m_stalls = 0; ///< over the threshold
    qint64 m_over50Ms = 0; ///< over 50 ms (issue 40's bar for the window's thread)
    double m_longestMs = 0;
};

} // namespace d2dpo::ui
