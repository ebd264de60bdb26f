// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/labelkeys.h"

#include <QCoreApplication>
#include <QKeyEvent>
#include <QKeySequence>

namespace d2dpo::ui {

LabelAction labelActionFor(const QKeyEvent& event)
{
    if (event.matches(QKeySequence::Undo))
        return LabelAction::Undo;
    if (event.modifiers() & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier))
        return LabelAction::None; // menu shortcuts (Ctrl+Q, Alt+F) are not labels
    switch (event.key()) {
    case Qt::Key_Left:
    case Qt::Key_1:
    case Qt::Key_A:
        return LabelAction::Left;
    case Qt::Key_Right:
    case Qt::Key_2:
    case Qt::Key_L:
        return LabelAction::Right;
    case Qt::Key_T:
        return LabelAction::Tie;
    case Qt::Key_S:
    case Qt::Key_Space:
        return LabelAction::Skip;
    default:
        return LabelAction::None;
    }
}

QString labelKeysSheet()
{
    return QCoreApplication::translate(
        "LabelKeys",
        "<table cellpadding='4'>"
        "<tr><td><b>← &nbsp; 1 &nbsp; A</b></td><td>the left sequence is better</td></tr>"
        "<tr><td><b>→ &nbsp; 2 &nbsp; L</b></td><td>the right sequence is better</td></tr>"
        "<tr><td><b>T</b></td><td>a tie: both as good (not trained on)</td></tr>"
        "<tr><td><b>S &nbsp; Space</b></td><td>skip this pair (not trained on)</td></tr>"
        "<tr><td><b>Ctrl+Z</b></td><td>undo this session's last label (an auto-labelled batch at once)</td></tr>"
        "<tr><td><b>Ctrl+1 / 2 / 3</b></td><td>the Label, Train and Models views</td></tr>"
        "</table>"
        "<p>Every press counts. A held key does not repeat, and a press that lands before the next pair "
        "is on screen is ignored and shown as such, so it never labels a pair you have not seen.</p>");
}

} // namespace d2dpo::ui
