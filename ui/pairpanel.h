// SPDX-License-Identifier: GPL-3.0-or-later
// The pair on screen in the Label view: two sequences side by side, each with its hint (the
// decoded integer and whether the encoding is valid; hidden to avoid bias) and its "is better"
// button. The buttons never take the focus, so the keys always reach the Label view.
#pragma once

#include <QWidget>

#include <optional>

#include "store/preferencestore.h"

class QLabel;
class QPushButton;

namespace d2dpo::ui {

class SequenceStrip;

class PairPanel final : public QWidget {
    Q_OBJECT

public:
    explicit PairPanel(QWidget* parent = nullptr);

    /// Shows a pair; with none the panel hides (the view says why instead).
    void showPair(const std::optional<ShownPair>& pair);
    void setHintsVisible(bool visible);

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
