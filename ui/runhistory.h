// SPDX-License-Identifier: GPL-3.0-or-later
// The Train view's past runs: the store's D2-DPO runs, newest first, each with its status, start
// time and device (and its error as the tooltip); selecting one asks for its curves to be shown
// again. A run the store still calls "running" that is not this window's own is said to be
// interrupted or running elsewhere.
#pragma once

#include <QGroupBox>

#include "store/preferencestore.h"

class QListWidget;

namespace d2dpo::ui {

class RunHistory final : public QGroupBox {
    Q_OBJECT

public:
    explicit RunHistory(PreferenceStore& store, QWidget* parent = nullptr);

    /// Lists the runs again; `training`: this window's run (the newest) is still going.
    void reload(bool training);
    /// The run whose curves are on the plots (selected when listed again); 0 for none.
    void setShownRun(qint64 runId) { m_shownRun = runId; }
    /// Whether a run can be chosen (not while one trains).
    void setSelectable(bool selectable);

Q_SIGNALS:
    void runSelected(qint64 runId);

private:
    PreferenceStore& m_store;
    QListWidget* m_runs = nullptr;
    qint64 m_shownRun = 0;
};

} // namespace d2dpo::ui
