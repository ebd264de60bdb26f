// SPDX-License-Identifier: GPL-3.0-or-later
// The Label view's bottom bar: the counters (this session, this labeler's and all labels, pending
// pairs, pairs usable for training), agreement with each pair's task's rule and the left-pick
// rate (position bias), and the button that labels every pending pair with its task's rule (for
// simulations), and the way to the Labelers report (agreement, gold accuracy, each labeler).
#pragma once

#include <QWidget>

#include "store/preferencestore.h"

class QLabel;
class QPushButton;

namespace d2dpo {
class TaskCatalog;
}

namespace d2dpo::ui {

class LabelStatsBar final : public QWidget {
    Q_OBJECT

public:
    LabelStatsBar(PreferenceStore& store, TaskCatalog& tasks, QWidget* parent = nullptr);

    /// Reads the counts and the statistics again; a store error goes out as `failed`.
    void refresh(const QString& labeler, int sessionCount);
    /// Shows counts read elsewhere (a team store's, read off the window's thread); `waiting`:
    /// choices kept on this machine that the server does not have yet.
    void show(const QString& labeler, int sessionCount, const LabelCounts& counts,
              const std::vector<std::pair<ShownPair, LabelRecord>>& labelled, size_t waiting);

Q_SIGNALS:
    void autoLabelClicked();
    void labelersClicked();
    void failed(const QString& message);

private:
    PreferenceStore& m_store;
    TaskCatalog& m_tasks;
    QLabel* m_counters = nullptr;
    QLabel* m_statistics = nullptr;
    QPushButton* m_autoLabel = nullptr;
    QPushButton* m_labelers = nullptr;
};

} // namespace d2dpo::ui
