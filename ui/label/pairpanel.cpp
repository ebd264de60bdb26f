// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/label/pairpanel.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QVBoxLayout>

#include <cmath>

#include "analysis/alignment.h"
#include "ui/label/pairgrid/pairgrid.h"
#include "ui/label/pairgrid/pairgridlegend.h"

namespace d2dpo::ui {

namespace {

const QString kAlignSetting = QStringLiteral("label/alignPairs");

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
    m_differences = new QLabel(this);
    m_differences->setObjectName(QStringLiteral("pairDifferences"));
    m_differences->setAccessibleName(tr("Differences between the two sequences"));
    m_align = new QCheckBox(tr("Align"), this);
    m_align->setObjectName(QStringLiteral("alignCheckBox"));
    m_align->setFocusPolicy(Qt::NoFocus); // keys go to the view
    m_align->setChecked(QSettings().value(kAlignSetting, true).toBool());
    m_grid = new PairGrid(this);
    m_legend = new PairGridLegend(this);

    auto* counts = new QHBoxLayout;
    counts->addWidget(m_differences);
    counts->addStretch();
    counts->addWidget(m_align);
    auto* sides = new QHBoxLayout;
    sides->addWidget(makeSide(tr("Left"), m_leftHint, m_leftButton, tr("◀  Left is better   [← · 1 · A]")), 1);
    sides->addWidget(makeSide(tr("Right"), m_rightHint, m_rightButton, tr("Right is better  ▶   [→ · 2 · L]")), 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(counts);
    layout->addWidget(m_grid);
    layout->addWidget(m_legend);
    layout->addSpacing(4);
    layout->addLayout(sides);
    // At most as tall as the whole grid; shorter (the grid scrolls) when the window is.
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);

    connect(m_leftButton, &QPushButton::clicked, this, &PairPanel::leftChosen);
    connect(m_rightButton, &QPushButton::clicked, this, &PairPanel::rightChosen);
    connect(m_align, &QCheckBox::toggled, this, [this](bool on) {
        QSettings().setValue(kAlignSetting, on);
        layOutColumns();
    });
}

QWidget* PairPanel::makeSide(const QString& side, QLabel*& hint, QPushButton*& button, const QString& buttonText)
{
    auto* box = new QWidget(this);
    hint = new QLabel(box);
    hint->setTextFormat(Qt::RichText);
    // Hidden hints keep their room: the buttons stay under the pointer when hints are toggled.
    QSizePolicy keep = hint->sizePolicy();
    keep.setRetainSizeWhenHidden(true);
    hint->setSizePolicy(keep);
    button = new QPushButton(buttonText, box);
    button->setFocusPolicy(Qt::NoFocus); // keys go to the view, never to a focused button
    button->setMinimumHeight(36);
    hint->setObjectName(side.toLower() + QStringLiteral("Hint"));
    button->setObjectName(side.toLower() + QStringLiteral("Button"));
    button->setAccessibleName(tr("%1 is better").arg(side));
    hint->setAccessibleName(tr("What the task reads in the %1 sequence").arg(side.toLower()));
    auto* layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(hint);
    layout->addWidget(button);
    return box;
}

void PairPanel::showPair(const std::optional<ShownPair>& pair, const TaskInfo* task)
{
    const bool have = pair.has_value();
    m_alphabet = task ? QString::fromStdString(task->alphabet()) : QStringLiteral("text");
    m_left = have ? QString::fromStdString(pair->left) : QString();
    m_right = have ? QString::fromStdString(pair->right) : QString();
    m_leftMotif = have && task ? task->ruleMatches(pair->left) : MotifSpans{};
    m_rightMotif = have && task ? task->ruleMatches(pair->right) : MotifSpans{};
    // The key names the motif whenever the rule is one (whether or not this pair matches), so
    // the key does not change from pair to pair.
    const QString rule = task ? QString::fromStdString(task->ruleSpec()) : QString();
    m_motif = rule.startsWith(QLatin1String("motif:")) ? rule.mid(6) : QString();
    const QString arrowLeft = QStringLiteral("◀ "), arrowRight = QStringLiteral(" ▶");
    m_leftHint->setText(have && task ? arrowLeft + hintText(task, pair->left) : QString());
    m_rightHint->setText(have && task ? hintText(task, pair->right) + arrowRight : QString());
    m_rightHint->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    m_align->setToolTip(tr("When the two lengths differ, align them with gaps: a global alignment with affine "
                           "gaps (%1)")
                            .arg(QString::fromStdString(
                                AlignmentScoring::forAlphabet(m_alphabet.toStdString()).describe())));
    m_leftButton->setEnabled(have);
    m_rightButton->setEnabled(have);
    layOutColumns();
    setVisible(have);
}

void PairPanel::layOutColumns()
{
    PairColumns columns = columnsOf(m_left, m_right, m_leftMotif, m_rightMotif);
    if (m_align->isChecked() && m_left.size() != m_right.size()) {
        // Equal lengths stay column by column: position i against position i is the comparison
        // a pair of one task asks for; an alignment is for lengths that differ.
        auto alignment = alignGlobal(m_left.toStdString(), m_right.toStdString(), m_alphabet.toStdString());
        if (alignment)
            columns = alignedColumnsOf(QString::fromStdString(alignment->first),
                                       QString::fromStdString(alignment->second), m_leftMotif, m_rightMotif);
    }
    m_differences->setText(columns.summary());
    m_legend->setContent(m_alphabet, m_motif, columns.gaps > 0,
                         m_left.contains(QLatin1Char('.')) || m_right.contains(QLatin1Char('.')));
    m_grid->setColumns(std::move(columns), m_alphabet);
}

void PairPanel::scrollPages(int pages) { m_grid->scrollPages(pages); }

void PairPanel::setAligned(bool aligned) { m_align->setChecked(aligned); }
bool PairPanel::aligned() const { return m_align->isChecked(); }

void PairPanel::setButtonKeys(const QString& left, const QString& right)
{
    // The keys on the button they press, said as keys: "L" alone read as "left" to a new user.
    m_leftButton->setText(tr("◀  Left is better  ·  keys %1").arg(left));
    m_rightButton->setText(tr("Right is better  ▶  ·  keys %1").arg(right));
    m_leftButton->setToolTip(tr("Any of %1 picks the left sequence (Settings ▸ Label keys… offers other layouts)").arg(left));
    m_rightButton->setToolTip(tr("Any of %1 picks the right sequence (Settings ▸ Label keys… offers other layouts)").arg(right));
}

void PairPanel::setMaxCell(double pixels) { m_grid->setMaxCell(int(std::lround(pixels))); }

void PairPanel::setHintsVisible(bool visible)
{
    m_leftHint->setVisible(visible);
    m_rightHint->setVisible(visible);
}

} // namespace d2dpo::ui
