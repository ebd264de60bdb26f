// SPDX-License-Identifier: GPL-3.0-or-later
// The pair on screen in the Label view: both sequences in one grid (PairGrid: the same position in
// the same column, differences marked and counted, the rule's motif matches framed; aligned with
// gaps when "Align" is ticked and the lengths differ), the colour key under it, and per side its
// hint (what the task reads in it, whether it is valid and what the rule sees; hidden to avoid
// bias) and its "is better" button. Nothing here takes the focus, so the keys always reach the
// Label view.
#pragma once

#include <QWidget>

#include <optional>

#include "facades/taskinfo.h"
#include "store/preferencestore.h"
#include "ui/label/pairgrid/pairgridcolumns.h"

class QCheckBox;
class QLabel;
class QPushButton;

namespace d2dpo::ui {

class PairGrid;
class PairGridLegend;

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
    /// The largest cell of the grid (the view scales it with the window).
    void setMaxCell(double pixels);
    /// Scrolls a pair taller than the panel by whole views (the view's Page Up/Down can call it).
    void scrollPages(int pages);
    /// Aligns pairs of different lengths (remembered in the settings, as the check box).
    void setAligned(bool aligned);
    bool aligned() const;

Q_SIGNALS:
    void leftChosen();
    void rightChosen();

private:
    QWidget* makeSide(const QString& side, QLabel*& hint, QPushButton*& button, const QString& buttonText);
    /// The grid's columns from the pair shown, aligned or not; the count above and the key below.
    void layOutColumns();

    PairGrid* m_grid = nullptr;
    PairGridLegend* m_legend = nullptr;
    QLabel* m_differences = nullptr;
    QCheckBox* m_align = nullptr;
    QLabel* m_leftHint = nullptr;
    QLabel* m_rightHint = nullptr;
    QPushButton* m_leftButton = nullptr;
    QPushButton* m_rightButton = nullptr;

    QString m_left;
    QString m_right;
    QString m_alphabet = QStringLiteral("text");
    QString m_motif; ///< the rule's spec when it marks matches
    MotifSpans m_leftMotif;
    MotifSpans m_rightMotif;
};

} // namespace d2dpo::ui
