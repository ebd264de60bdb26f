// SPDX-License-Identifier: GPL-3.0-or-later
// The Label view's keys, which the expert can rebind (Settings ▸ Label keys…, kept in QSettings).
// Defaults: Left, 1 or A: the left sequence is better; Right, 2 or L: the right one; T: a tie;
// B: both bad; S or Space: skip; Ctrl+Z (the platform's Undo): undo; Page Down/Up: the rest of a
// pair too long for the window. The letters for left and
// right come in layouts: the key under the left hand picks left (A and L, the default; or F and J
// on the home row), or the initials (L for left, R for right) for those who read the key as a word.
#pragma once

#include <QKeySequence>
#include <QList>
#include <QMap>
#include <QString>

class QKeyEvent;

namespace d2dpo::ui {

enum class LabelAction { None, Left, Right, Tie, BothBad, Skip, Undo, NextPage, PreviousPage };

/// Which letters pick the left and the right sequence (the arrows, 1 and 2 always do).
enum class KeyLayout { LeftHandLeft, HomeRow, Initials };

class KeyBindings {
public:
    static KeyBindings defaults();
    /// The defaults with the letters of `layout` for left and right.
    static KeyBindings withLayout(KeyLayout layout);
    /// "Left hand picks left (A · L)".
    static QString describe(KeyLayout layout);
    /// The saved bindings, or the defaults.
    static KeyBindings load();
    void save() const;

    LabelAction actionFor(const QKeyEvent& event) const;
    QList<QKeySequence> keys(LabelAction action) const { return m_keys.value(action); }
    /// Binds `keys` to `action`; "" when fine, else why not (empty: the action is left without keys;
    /// a key of another action: nothing changes).
    QString bind(LabelAction action, const QList<QKeySequence>& keys);
    /// "← · 1 · A": the keys as the buttons show them.
    QString shown(LabelAction action) const;
    /// The keys sheet (Help ▸ Keyboard shortcuts).
    QString sheet() const;

    static QList<LabelAction> actions();
    static QString describe(LabelAction action);

private:
    QMap<LabelAction, QList<QKeySequence>> m_keys;
};

} // namespace d2dpo::ui
