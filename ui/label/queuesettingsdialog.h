// SPDX-License-Identifier: GPL-3.0-or-later
// Settings ▸ Labeling queue…: how the store hands pairs out (core `QueueSettings`): labelers per
// pair, the share of gold pairs, and the order, each with a line a labeling lead can act on. It
// reads the store's settings when made and writes them on OK; a refusal shows in the dialog and
// nothing changes. Its fields ignore the mouse wheel unless focused, so scrolling past them
// cannot change the queue.
#pragma once

#include <QDialog>

#include "store/preferencestore.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;

namespace d2dpo::ui {

class QueueSettingsDialog final : public QDialog {
    Q_OBJECT

public:
    explicit QueueSettingsDialog(PreferenceStore& store, QWidget* parent = nullptr);

    /// The settings as the fields show them.
    QueueSettings settings() const;

public Q_SLOTS:
    /// Writes the fields to the store and closes; on a refusal the dialog stays open with it.
    void accept() override;

Q_SIGNALS:
    /// The store's settings changed (the Label view reads its queue again).
    void queueChanged();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    /// A field's explanation: a small grey line under it.
    QLabel* explanation(const QString& text);
    /// How many pending pairs have a margin, in words (least sure first orders by it).
    QString marginsInWords();

    PreferenceStore& m_store;
    QueueSettings m_read;         ///< as the store held them (what OK compares with)
    double m_readGoldPercent = 0; ///< the gold share as first shown, rounded to the field's decimals
    QSpinBox* m_overlap = nullptr;
    QDoubleSpinBox* m_goldPercent = nullptr;
    QComboBox* m_order = nullptr;
    QSpinBox* m_lease = nullptr;
    QLabel* m_problem = nullptr;
};

} // namespace d2dpo::ui
