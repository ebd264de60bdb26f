// SPDX-License-Identifier: GPL-3.0-or-later
// Settings ▸ Labeling queue…: how the store hands pairs out (core `QueueSettings`): labelers per
// pair, the share of gold pairs, and the order, each with a line a labeling lead can act on. It
// reads the store's settings when made and writes them on OK (a team store's off the window's
// thread, through a connection of its own: the fields wait, the window does not); a refusal
// shows in the dialog and nothing changes. Its fields ignore the mouse wheel unless focused, so scrolling past them
// cannot change the queue.
#pragma once

#include <QDialog>
#include <QFutureWatcher>

#include <memory>
#include <optional>
#include <string>

#include "store/preferencestore.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace d2dpo::ui {

class OwnConnection;

class QueueSettingsDialog final : public QDialog {
    Q_OBJECT

public:
    explicit QueueSettingsDialog(PreferenceStore& store, QWidget* parent = nullptr);

    /// The settings as the fields show them.
    QueueSettings settings() const;

public Q_SLOTS:
    /// Writes the fields to the store and closes; on a refusal the dialog stays open with it.
    void accept() override;
    /// Closes, unless a team store's write is on its way (then it stays open to say how it ended).
    void reject() override;

Q_SIGNALS:
    /// The store's settings changed (the Label view reads its queue again).
    void queueChanged();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    /// As tall as the wrapped explanations need at the dialog's width.
    void fitHeight();
    /// A field's explanation: a small grey line under it.
    QLabel* explanation(const QString& text);
    /// What the dialog shows of the store: its settings and the pending pairs' margins.
    struct StoreRead {
        std::optional<QueueSettings> settings;
        std::string settingsError;
        std::optional<PendingMargins> margins;
        std::string marginsError;
    };
    static StoreRead readStore(LabelQueue& store);
    /// Fills the fields, or says why they cannot be.
    void showRead(const StoreRead& read);
    /// How many pending pairs have a margin, in words (least sure first orders by it).
    static QString marginsInWords(const StoreRead& read);
    /// After a write: closes, or shows the refusal.
    void written(const std::string& error, const QueueSettings& settings);

    PreferenceStore& m_store;
    std::shared_ptr<OwnConnection> m_connection; ///< a team store's, for the pool's tasks
    QFutureWatcher<StoreRead>* m_reading = nullptr;
    QFutureWatcher<std::string>* m_writing = nullptr;
    QueueSettings m_writingSettings; ///< what the write on its way writes
    QPushButton* m_ok = nullptr;
    QLabel* m_margins = nullptr;
    QueueSettings m_read;         ///< as the store held them (what OK compares with)
    double m_readGoldPercent = 0; ///< the gold share as first shown, rounded to the field's decimals
    QSpinBox* m_overlap = nullptr;
    QDoubleSpinBox* m_goldPercent = nullptr;
    QComboBox* m_order = nullptr;
    QSpinBox* m_lease = nullptr;
    QLabel* m_problem = nullptr;
};

} // namespace d2dpo::ui
