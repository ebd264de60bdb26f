// SPDX-License-Identifier: GPL-3.0-or-later
// Settings ▸ Label keys…: one line per labelling action with its keys ("Left; 1; A"), checked as
// typed (a key of two actions, an empty line or a chord is refused in words), Restore defaults.
#pragma once

#include <QDialog>
#include <QMap>

#include "ui/label/labelkeys.h"

class QDialogButtonBox;
class QLabel;
class QLineEdit;

namespace d2dpo::ui {

class KeysDialog final : public QDialog {
    Q_OBJECT

public:
    KeysDialog(const KeyBindings& current, QWidget* parent = nullptr);

    /// The bindings as edited (valid when the dialog was accepted).
    const KeyBindings& bindings() const { return m_bindings; }
    /// Sets the text of an action's line (for tests and the defaults button).
    void setKeysText(LabelAction action, const QString& text);

private:
    void check();
    void fill(const KeyBindings& bindings);

    KeyBindings m_bindings;
    QMap<LabelAction, QLineEdit*> m_edits;
    QLabel* m_problem = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
};

} // namespace d2dpo::ui
