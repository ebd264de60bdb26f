// SPDX-License-Identifier: GPL-3.0-or-later
// File ▸ Open team store…: a PostgreSQL store's URL (the last one remembered, without a password),
// tried in the background before anything closes, so a typo or an unreachable server is said here
// and the window in use stays. Says who the connection labels as, and as what.
#pragma once

#include <QDialog>
#include <QFutureWatcher>

class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace d2dpo::ui {

/// What trying a team store found: who connects as what, or why it cannot.
struct TeamStoreProbe {
    bool ok = false;
    QString message;
    QString withoutPassword; ///< the URL as the store names it: what is remembered
};

class TeamStoreDialog final : public QDialog {
    Q_OBJECT
public:
    explicit TeamStoreDialog(QWidget* parent = nullptr);
    /// The URL as typed (what the new window opens).
    QString url() const;
    /// Tries the URL now (the Connect button); OK is enabled when it works.
    void tryUrl();
    QString statusText() const;
    bool canOpen() const;

private:
    QLineEdit* m_url = nullptr;
    QPushButton* m_connect = nullptr;
    QLabel* m_status = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
    QFutureWatcher<TeamStoreProbe>* m_watcher = nullptr;
    QString m_tried;
    QString m_remembered;
};

} // namespace d2dpo::ui
