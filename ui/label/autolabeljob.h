// SPDX-License-Identifier: GPL-3.0-or-later
// Auto-labelling on a team store, never on the window's thread: the pending pairs are read and the
// rule's plan made on the store-read pool through a connection of its own, the question is asked on
// the window's thread, and the labels are written back on the pool. A server that stopped
// answering costs the window nothing; the Label view on a store file labels as autolabel.h does.
#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <QPointer>
#include <QWidget>

#include <functional>
#include <memory>
#include <string>

#include "labeling/rulelabeler.h"
#include "ui/label/autolabel.h"


namespace d2dpo::ui {

class OwnConnection;

class AutoLabelJob final : public QObject {
    Q_OBJECT

public:
    /// Works on the store at `storeUrl` (a team store's URL).
    explicit AutoLabelJob(const std::string& storeUrl, QObject* parent = nullptr);

    /// Reading, asking or writing.
    bool busy() const { return m_busy; }
    /// Reads the pending pairs and plans; asks `confirm(count)` (else a dialog over `dialogParent`);
    /// writes the labels; then finished(). Ignored (false) while busy.
    bool start(QWidget* dialogParent, std::function<bool(int)> confirm);

Q_SIGNALS:
    /// The end: what to say, and the labels written (`result.applied`), for the session's undo.
    void finished(const d2dpo::ui::AutoLabelResult& result, const d2dpo::RuleLabelOutcome& outcome);

private:
    struct Planned {
        RuleLabelPlan plan;
        std::string error;
    };
    void onPlanned();
    void onWritten();

    std::shared_ptr<OwnConnection> m_connection;
    QFutureWatcher<Planned>* m_planning = nullptr;
    QFutureWatcher<RuleLabelOutcome>* m_writing = nullptr;
    QPointer<QWidget> m_dialogParent;
    std::function<bool(int)> m_confirm;
    RuleLabelPlan m_plan; ///< the plan being written
    bool m_busy = false;
};

} // namespace d2dpo::ui
