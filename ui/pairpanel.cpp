// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/pairpanel.h"

#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include "ui/sequencestrip.h"

namespace d2dpo::ui {

namespace {

QString hintText(const TaskInfo* task, const std::string& text)
{
    if (!task)
        return {};
    const SequenceHint hint = task->hint(text);
    if (!hint.valid)
        return QStringLiteral("<span style='color:#b03a2e'>%1</span>").arg(QString::fromStdString(hint.value).toHtmlEscaped());
    QString line = QStringLiteral("<b>%1</b> · valid").arg(QString::fromStdString(hint.value).toHtmlEscaped());
    if (!hint.rule.empty())
        line += QStringLiteral(" · %1").arg(QString::fromStdString(hint.rule).toHtmlEscaped());
    return line;
}

} // namespace

PairPanel::PairPanel(QWidget* parent)
    : QWidget(parent)
{
    auto* pair = new QHBoxLayout(this);
    pair->setContentsMargins(0, 0, 0, 0);
    pair->addWidget(makeSide(tr("Left"), m_left, m_leftHint, m_leftButton, tr("◀  Left is better   [← · 1 · A]")), 1);
    pair->addWidget(makeSide(tr("Right"), m_right, m_rightHint, m_rightButton, tr("Right is better  ▶   [→ · 2 · L]")),
                    1);
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);

    connect(m_leftButton, &QPushButton::clicked, this, &PairPanel::leftChosen);
    connect(m_rightButton, &QPushButton::clicked, this, &PairPanel::rightChosen);
}

QWidget* PairPanel::makeSide(const QString& title, SequenceStrip*& strip, QLabel*& hint, QPushButton*& button,
                             const QString& buttonText)
{
    auto* box = new QGroupBox(title, this);
    strip = new SequenceStrip(box);
    hint = new QLabel(box);
    hint->setTextFormat(Qt::RichText);
    button = new QPushButton(buttonText, box);
    button->setFocusPolicy(Qt::NoFocus); // keys go to the view, never to a focused button
    button->setMinimumHeight(36);
    strip->setObjectName(title.toLower() + QStringLiteral("Strip"));
    hint->setObjectName(title.toLower() + QStringLiteral("Hint"));
    button->setObjectName(title.toLower() + QStringLiteral("Button"));
    strip->setAccessibleName(tr("%1 sequence").arg(title));
    button->setAccessibleName(tr("%1 is better").arg(title));
    hint->setAccessibleName(tr("What the task reads in the %1 sequence").arg(title.toLower()));
    auto* layout = new QVBoxLayout(box);
    layout->addWidget(strip);
    layout->addWidget(hint);
    layout->addSpacing(8);
    layout->addWidget(button);
    box->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
    return box;
}

void PairPanel::showPair(const std::optional<ShownPair>& pair, const TaskInfo* task)
{
    const bool have = pair.has_value();
    const QString alphabet = task ? QString::fromStdString(task->alphabet()) : QStringLiteral("text");
    m_left->setAlphabet(alphabet);
    m_right->setAlphabet(alphabet);
    m_left->setTokens(have ? QString::fromStdString(pair->left) : QString());
    m_right->setTokens(have ? QString::fromStdString(pair->right) : QString());
    m_leftHint->setText(have ? hintText(task, pair->left) : QString());
    m_rightHint->setText(have ? hintText(task, pair->right) : QString());
    m_leftButton->setEnabled(have);
    m_rightButton->setEnabled(have);
    setVisible(have);
}

void PairPanel::setButtonKeys(const QString& left, const QString& right)
{
    m_leftButton->setText(tr("◀  Left is better   [%1]").arg(left));
    m_rightButton->setText(tr("Right is better  ▶   [%1]").arg(right));
}

void PairPanel::setMaxCell(double pixels)
{
    m_left->setMaxCell(pixels);
    m_right->setMaxCell(pixels);
}

void PairPanel::setHintsVisible(bool visible)
{
    m_leftHint->setVisible(visible);
    m_rightHint->setVisible(visible);
}

} // namespace d2dpo::ui
