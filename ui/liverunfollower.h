// SPDX-License-Identifier: GPL-3.0-or-later
// A team store's runs as they happen on other machines: the Train view looks at the store every
// two seconds, so a run started, ended or grown elsewhere shows in its list and on its plots.
#pragma once

#include <QObject>

#include <string>

class QTimer;

namespace d2dpo {
class PreferenceStore;
}

namespace d2dpo::ui {

class LiveRunFollower final : public QObject {
    Q_OBJECT
public:
    static constexpr int kPollMs = 2000;
    /// Looks only on a team store (a file's runs are this machine's, and the views see their own).
    LiveRunFollower(PreferenceStore& store, QObject* parent);
    /// The run whose curves to keep up to date (0: none).
    void follow(qint64 runId);
    qint64 followed() const { return m_followed; }
    /// One look now (what the timer runs).
    void poll();

Q_SIGNALS:
    /// A run started, ended or changed its status somewhere.
    void runsChanged();
    /// The followed run recorded more points.
    void followedAdvanced(qint64 runId);
    /// The followed run is no longer running (completed, stopped, failed or interrupted).
    void followedEnded(qint64 runId);

private:
    PreferenceStore& m_store;
    QTimer* m_timer = nullptr;
    std::string m_runs; ///< every run's id and status at the last look
    bool m_looked = false;
    qint64 m_followed = 0;
    size_t m_points = 0;
};

} // namespace d2dpo::ui
