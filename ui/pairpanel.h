// SPDX-License-Identifier: GPL-3.0-or-later
// The pair on screen in the Label view: two sequences side by side, drawn in their task's
// alphabet, each with its hint (what the task reads in it, whether it is valid and what the rule
// sees; hidden to avoid bias) and its "is better" button. The buttons never take the focus, so
// the keys always reach the Label view.
#pragma once

#include <QWidget>

#include <optional>

#include "facades/taskinfo.h"
#include "store/preferencestore.h"

class QLabel;
class QPushButton;

namespace d2dpo::ui {

class SequenceStrip;

class PairPanel final : public QWidget {
    Q_OBJECT

public:
    explicit PairPanel(QWidget* parent = nullptr);

    /// Shows a pair of `task` (null: drawn as plain text without hints); with none the panel hides
    /// (the view says why instead).
    void showPair(const std::optional<ShownPair>& pair, const TaskInfo* task);
    void setHintsVisible(bool visible);
    /// The keys shown on the "is better" buttons ("← · 1 · A").
    void setButtonKeys(const QString& left, const QString& right);
    /// The largest cell of both strips (the view scales it with the window).
    void setMaxCell(double pixels);

Q_SIGNALS:
    void leftChosen();
    void rightChosen();

private:
    QWidget* makeSide(const QString& title, SequenceStrip*& strip, QLabel*& hint, QPushButton*& button,
                      const QString& buttonText);

    SequenceStrip* m_left = nullptr;
    SequenceStrip* m_right = nullptr;
    QLabel* m_leftHint = nullptr;
    QLabel* m_rightHint = nullptr;
    QPushButton* m_leftButton = nullptr;
    QPushButton* m_rightButton = nullptr;
};

} // namespace d2dpo::ui
