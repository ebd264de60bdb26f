// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/label/labelkeys.h"

#include <QCoreApplication>
#include <QKeyEvent>
#include <QSettings>
#include <QStringList>

#include <utility>

namespace d2dpo::ui {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("LabelKeys", text); }

QString settingsKey(LabelAction action) { return QStringLiteral("labelKeys/%1").arg(int(action)); }

} // namespace

QList<LabelAction> KeyBindings::actions()
{
    return {LabelAction::Left,  LabelAction::Right, LabelAction::Tie,      LabelAction::BothBad,
            LabelAction::Skip,  LabelAction::Undo,  LabelAction::NextPage, LabelAction::PreviousPage};
}

QString KeyBindings::describe(LabelAction action)
{
    switch (action) {
    case LabelAction::Left: return tr("the left sequence is better");
    case LabelAction::Right: return tr("the right sequence is better");
    case LabelAction::Tie: return tr("a tie: both as good (not trained on)");
    case LabelAction::BothBad: return tr("both are bad: neither is acceptable (recorded, not trained on)");
    case LabelAction::Skip: return tr("skip this pair (not trained on)");
    case LabelAction::Undo: return tr("undo this session's last label (an auto-labelled batch at once)");
    case LabelAction::NextPage: return tr("show the next rows of a long pair");
    case LabelAction::PreviousPage: return tr("show the previous rows of a long pair");
    case LabelAction::None: break;
    }
    return {};
}

KeyBindings KeyBindings::defaults()
{
    KeyBindings b;
    b.m_keys[LabelAction::Left] = {QKeySequence(Qt::Key_Left), QKeySequence(Qt::Key_1), QKeySequence(Qt::Key_A)};
    b.m_keys[LabelAction::Right] = {QKeySequence(Qt::Key_Right), QKeySequence(Qt::Key_2), QKeySequence(Qt::Key_L)};
    b.m_keys[LabelAction::Tie] = {QKeySequence(Qt::Key_T)};
    b.m_keys[LabelAction::BothBad] = {QKeySequence(Qt::Key_B)};
    b.m_keys[LabelAction::Skip] = {QKeySequence(Qt::Key_S), QKeySequence(Qt::Key_Space)};
    b.m_keys[LabelAction::Undo] = QKeySequence::keyBindings(QKeySequence::Undo);
    b.m_keys[LabelAction::NextPage] = {QKeySequence(Qt::Key_PageDown)};
    b.m_keys[LabelAction::PreviousPage] = {QKeySequence(Qt::Key_PageUp)};
    return b;
}

KeyBindings KeyBindings::withLayout(KeyLayout layout)
{
    KeyBindings b = defaults();
    const auto [left, right] = layout == KeyLayout::HomeRow    ? std::pair{Qt::Key_F, Qt::Key_J}
                               : layout == KeyLayout::Initials ? std::pair{Qt::Key_L, Qt::Key_R}
                                                               : std::pair{Qt::Key_A, Qt::Key_L};
    b.m_keys[LabelAction::Left] = {QKeySequence(Qt::Key_Left), QKeySequence(Qt::Key_1), QKeySequence(left)};
    b.m_keys[LabelAction::Right] = {QKeySequence(Qt::Key_Right), QKeySequence(Qt::Key_2), QKeySequence(right)};
    return b;
}

QString KeyBindings::describe(KeyLayout layout)
{
    switch (layout) {
    case KeyLayout::HomeRow: return QCoreApplication::translate("KeyBindings", "Home row: F picks left, J picks right");
    case KeyLayout::Initials: return QCoreApplication::translate("KeyBindings", "Initials: L picks left, R picks right");
    case KeyLayout::LeftHandLeft: break;
    }
    return QCoreApplication::translate("KeyBindings", "Left hand picks left: A picks left, L picks right");
}

KeyBindings KeyBindings::load()
{
    KeyBindings b = defaults();
    QSettings settings;
    for (LabelAction action : actions()) {
        const QString saved = settings.value(settingsKey(action)).toString();
        const QList<QKeySequence> keys = QKeySequence::listFromString(saved, QKeySequence::PortableText);
        if (!saved.isEmpty() && !keys.isEmpty())
            b.m_keys[action] = keys;
    }
    return b;
}

void KeyBindings::save() const
{
    QSettings settings;
    for (LabelAction action : actions())
        settings.setValue(settingsKey(action), QKeySequence::listToString(keys(action), QKeySequence::PortableText));
}

LabelAction KeyBindings::actionFor(const QKeyEvent& event) const
{
    // The keypad's 1 is the 1 key; other modifiers make another key (Ctrl+A is not A).
    const QKeyCombination pressed(event.modifiers() & ~Qt::KeypadModifier, Qt::Key(event.key()));
    for (LabelAction action : actions())
        for (const QKeySequence& key : m_keys.value(action))
            if (key.count() == 1 && key[0] == pressed)
                return action;
    return LabelAction::None;
}

QString KeyBindings::bind(LabelAction action, const QList<QKeySequence>& keys)
{
    if (keys.isEmpty()) {
        m_keys[action] = {};
        return tr("“%1” needs at least one key").arg(describe(action));
    }
    for (const QKeySequence& key : keys) {
        if (key.count() != 1)
            return tr("%1 is not a single key press").arg(key.toString(QKeySequence::NativeText));
        for (LabelAction other : actions())
            if (other != action && m_keys.value(other).contains(key))
                return tr("%1 is already the key for “%2”").arg(key.toString(QKeySequence::NativeText),
                                                                describe(other));
    }
    m_keys[action] = keys;
    return {};
}

QString KeyBindings::shown(LabelAction action) const
{
    QStringList names;
    for (const QKeySequence& key : keys(action)) {
        QString name = key.toString(QKeySequence::NativeText);
        if (name == QLatin1String("Left"))
            name = QStringLiteral("←");
        else if (name == QLatin1String("Right"))
            name = QStringLiteral("→");
        names << name;
    }
    return names.join(QStringLiteral(" · "));
}

QString KeyBindings::sheet() const
{
    QString rows;
    for (LabelAction action : actions())
        rows += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>")
                    .arg(shown(action).toHtmlEscaped(), describe(action).toHtmlEscaped());
    rows += QStringLiteral("<tr><td><b>Ctrl+1 · Ctrl+2 · Ctrl+3</b></td><td>%1</td></tr>")
                .arg(tr("the Label, Train and Models views"));
    return QStringLiteral("<table cellpadding='4'>%1</table><p>%2</p>")
        .arg(rows, tr("Every press counts. A held key does not repeat, and a press that lands before the next pair "
                      "is on screen is ignored and shown as such, so it never labels a pair you have not seen. "
                      "Settings ▸ Label keys… rebinds them."));
}

} // namespace d2dpo::ui
