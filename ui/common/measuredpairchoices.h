// SPDX-License-Identifier: GPL-3.0-or-later
// The fields every view that makes pairs of measurements shows alike (the Train view's measured
// source, the Measurements view's pairs preview, the Models view's held-out tab): the pair
// strategy, and the held-out share with its split. Each item's data is the name core takes
// (jobs/assaypairs.h: "margin", "clusters", "best"; assays/heldoutsplit.h: "random", "position",
// "mutations").
#pragma once

class QComboBox;
class QDoubleSpinBox;
class QWidget;

namespace d2dpo::ui {

/// The three pair strategies, margin first.
QComboBox* makePairStrategyChoice(QWidget* parent);

/// The held-out share (from `lowest` to 0.9, 0.2 at first) and the split it is taken by.
struct HeldOutChoice {
    QDoubleSpinBox* share = nullptr;
    QComboBox* split = nullptr;
};
HeldOutChoice makeHeldOutChoice(QWidget* parent, double lowest = 0.0);

} // namespace d2dpo::ui
