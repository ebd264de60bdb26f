// SPDX-License-Identifier: GPL-3.0-or-later
// The Train view's past runs: the store's D2-DPO runs, newest first, each with its status, start
// time and device (and its error as the tooltip); selecting one asks for its curves to be shown
// again, and a stopped or interrupted one can be resumed from its last checkpoint. A run the store
// calls "running" that is not this window's own is alive in another process (a dead one is
// marked interrupted when the store is opened: base/runlock.h).
#pragma once

#include <QFutureWatcher>
#include <QGroupBox>
#include <QStringList>

#include <memory>
#include <string>
#include <vector>

#include "store/preferencestore.h"

class QListWidget;
class QPushButton;

namespace d2dpo::ui {

class RunHistory final : public QGroupBox {
    Q_OBJECT

public:
    explicit RunHistory(PreferenceStore& store, QWidget* parent = nullptr);

    /// Lists the runs again; `ownLockPath`: the lock file of this window's run while it trains
    /// ("" when none does), so a running run is known as its own or another process's.
    void reload(const std::string& ownLockPath);
    /// The same, read on the long-job pool through a connection of its own, shown when it arrives.
    void reloadInBackground(const std::string& ownLockPath);
    /// The run whose curves are on the plots (selected when listed again); 0 for none.
    void setShownRun(qint64 runId)
    {
        m_shownRun = runId;
        m_clickedRun = 0;
    }
    qint64 shownRun() const { return m_shownRun; }
    /// Whether a run can be chosen (not while one trains).
    void setSelectable(bool selectable);

    /// The selected run (0 for none).
    qint64 selectedRun() const;

Q_SIGNALS:
    void runSelected(qint64 runId);
    /// Resume was pressed for a stopped or interrupted run.
    void resumeRequested(qint64 runId);
    /// The store failed a read or a write while listing the runs; `what` says which, in words.
    void storeFailed(const QString& what);

private:
    /// The list as read (on any thread) and as shown.
    struct Row {
        qint64 id = 0;
        QString text, error;
        bool resumable = false;
    };
    struct Listing {
        bool ok = false;
        std::vector<Row> rows;
        QStringList problems; ///< the store's failures, said in the view's log
    };
    static Listing readListing(PreferenceStore& store, const std::string& ownLockPath);
    void showListing(const Listing& listing);

    PreferenceStore& m_store;
    void updateResume();
    std::shared_ptr<class OwnConnection> m_reader;
    QFutureWatcher<Listing>* m_listing = nullptr;
    bool m_again = false;
    std::string m_againLockPath;
    quint64 m_generation = 0;     ///< lists shown at once (reload) so far
    quint64 m_readGeneration = 0; ///< the generation the background read on its way started in

    QListWidget* m_runs = nullptr;
    QPushButton* m_resume = nullptr;
    bool m_selectable = true;
    qint64 m_shownRun = 0;
    qint64 m_clickedRun = 0; ///< chosen by the user, its curves not shown yet
};

} // namespace d2dpo::ui
