// SPDX-License-Identifier: GPL-3.0-or-later
// The Label view's keys: which action a key press asks for. Left, 1 or A: the left sequence is
// better; Right, 2 or L: the right one; T: a tie; S or Space: skip; Ctrl+Z (the platform's Undo):
// undo.
#pragma once

#include <QString>

class QKeyEvent;

namespace d2dpo::ui {

enum class LabelAction { None, Left, Right, Tie, Skip, Undo };

LabelAction labelActionFor(const QKeyEvent& event);

/// The keys sheet: one line per action with its keys.
QString labelKeysSheet();

} // namespace d2dpo::ui
