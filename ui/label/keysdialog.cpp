// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/label/keysdialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace d2dpo::ui {

KeysDialog::KeysDialog(const KeyBindings& current, QWidget* parent)
    : QDialog(parent)
    , m_bindings(current)
{
    setWindowTitle(tr("Label keys"));
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(tr("Keys for each choice, separated by “;” (for example: Left; 1; A)."), this));
    auto* form = new QFormLayout;
    // A layout fills the letters of left and right; the fields below can still change each key.
    auto* layouts = new QComboBox(this);
    layouts->setObjectName(QStringLiteral("keyLayout"));
    layouts->addItem(tr("(as below)"));
    for (KeyLayout l : {KeyLayout::LeftHandLeft, KeyLayout::HomeRow, KeyLayout::Initials})
        layouts->addItem(KeyBindings::describe(l), int(l));
    form->addRow(tr("Layout"), layouts);
    connect(layouts, &QComboBox::activated, this, [this, layouts](int index) {
        if (index <= 0)
            return;
        // Only the letters of left and right change: the other keys stay as they are in the fields.
        const KeyBindings layout = KeyBindings::withLayout(KeyLayout(layouts->itemData(index).toInt()));
        KeyBindings kept = m_bindings;
        (void)kept.bind(LabelAction::Left, {});
        (void)kept.bind(LabelAction::Right, {});
        (void)kept.bind(LabelAction::Left, layout.keys(LabelAction::Left));
        (void)kept.bind(LabelAction::Right, layout.keys(LabelAction::Right));
        fill(kept);
    });
    for (LabelAction action : KeyBindings::actions()) {
        auto* edit = new QLineEdit(this);
        edit->setObjectName(QStringLiteral("keys%1").arg(int(action)));
        edit->setAccessibleName(KeyBindings::describe(action));
        form->addRow(KeyBindings::describe(action), edit);
        m_edits.insert(action, edit);
        connect(edit, &QLineEdit::textChanged, this, &KeysDialog::check);
    }
    layout->addLayout(form);
    m_problem = new QLabel(this);
    m_problem->setObjectName(QStringLiteral("problem"));
    m_problem->setStyleSheet(QStringLiteral("color: #b00020"));
    m_problem->setWordWrap(true);
    layout->addWidget(m_problem);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel |
                                         QDialogButtonBox::RestoreDefaults,
                                     this);
    layout->addWidget(m_buttons);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_buttons->button(QDialogButtonBox::RestoreDefaults), &QPushButton::clicked, this,
            [this] { fill(KeyBindings::defaults()); });
    fill(current);
}

void KeysDialog::fill(const KeyBindings& bindings)
{
    for (LabelAction action : KeyBindings::actions())
        m_edits[action]->setText(QKeySequence::listToString(bindings.keys(action), QKeySequence::PortableText));
    check();
}

void KeysDialog::setKeysText(LabelAction action, const QString& text) { m_edits[action]->setText(text); }

void KeysDialog::check()
{
    // Bind every action in turn onto empty bindings, so a key of two actions is caught either way.
    KeyBindings edited = KeyBindings::defaults();
    for (LabelAction action : KeyBindings::actions())
        (void)edited.bind(action, {});
    QString problem;
    for (LabelAction action : KeyBindings::actions()) {
        const QString text = m_edits[action]->text().trimmed();
        QList<QKeySequence> keys = QKeySequence::listFromString(text, QKeySequence::PortableText);
        keys.removeIf([](const QKeySequence& k) { return k.isEmpty(); });
        if (!text.isEmpty() && keys.isEmpty())
            problem = tr("“%1” is not a key").arg(text);
        else if (const QString why = edited.bind(action, keys); !why.isEmpty() && problem.isEmpty())
            problem = why;
    }
    m_problem->setText(problem);
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(problem.isEmpty());
    if (problem.isEmpty())
        m_bindings = edited;
}

} // namespace d2dpo::ui
