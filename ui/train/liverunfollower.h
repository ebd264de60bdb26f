// SPDX-License-Identifier: GPL-3.0-or-later
// A team store's runs as they happen on other machines: the Train view looks at the store every
// two seconds, so a run started, ended or grown elsewhere shows in its list and on its plots. Each
// look runs on a pool thread with a connection of its own, one look at a time, so a server out of
// reach never holds up the window: the look just comes back empty and the next one tries again.
#pragma once

#include <QFutureWatcher>
#include <QObject>

#include <memory>
#include <string>

#include "base/runstatus.h"

class QTimer;

namespace d2dpo {
class PreferenceStore;
}

namespace d2dpo::ui {

class OwnConnection;

class LiveRunFollower final : public QObject {
    Q_OBJECT
public:
    static constexpr int kPollMs = 2000;
    /// Looks only on a team store (a file's runs are this machine's, and the views see their own).
    LiveRunFollower(PreferenceStore& store, QObject* parent);
    /// Does not wait for a look on its way (it ends on its own).
    ~LiveRunFollower() override;
    /// The run whose curves to keep up to date (0: none).
    void follow(qint64 runId);
    qint64 followed() const { return m_followed; }
    /// Starts a look now (what the timer runs), unless one is on its way.
    void poll();

    /// What one look saw.
    struct Look {
        bool ok = false;           ///< false: the server could not be read
        std::string runs;          ///< every run's id and status
        qint64 followed = 0;       ///< the run it looked at
        RunStatus followedStatus = RunStatus::Interrupted;
        qint64 points = -1;        ///< that run's loss points (-1: not read)
    };

Q_SIGNALS:
    /// A run started, ended or changed its status somewhere.
    void runsChanged();
    /// The followed run recorded more points.
    void followedAdvanced(qint64 runId);
    /// The followed run is no longer running (completed, stopped, failed or interrupted).
    void followedEnded(qint64 runId);

private:
    void onLook(const Look& look);

    /// The looks' connection: opened by the first look, used by one look at a time.
    std::shared_ptr<OwnConnection> m_connection;
    QFutureWatcher<Look>* m_watcher = nullptr;
    QTimer* m_timer = nullptr;
    std::string m_runs; ///< every run's id and status at the last look
    bool m_looked = false; ///< a look came back (the first one is reported as a change)
    qint64 m_followed = 0;
    qint64 m_points = 0; ///< the followed run's loss points at the last look
};

} // namespace d2dpo::ui
