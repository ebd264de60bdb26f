// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/label/labelviewparts.h"

#include <QCheckBox>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>

#include <algorithm>

#include "base/timeutil.h"

namespace d2dpo::ui {

QPushButton* makeLabelButton(const QString& text, QWidget* parent)
{
    auto* button = new QPushButton(text, parent);
    button->setFocusPolicy(Qt::NoFocus); // keys go to the view, never to a focused button
    button->setMinimumHeight(36);
    return button;
}

QCheckBox* makeHintsBox(QWidget* parent)
{
    auto* hints = new QCheckBox(QCheckBox::tr("Show hints"), parent);
    hints->setToolTip(QCheckBox::tr("What the task reads in each sequence, whether it is valid, and what the rule says"));
    hints->setFocusPolicy(Qt::NoFocus);
    hints->setChecked(true);
    hints->setObjectName(QStringLiteral("hintsCheckBox"));
    hints->setAccessibleName(QCheckBox::tr("Show hints"));
    return hints;
}

QProgressBar* makeGenerationBar(QWidget* parent)
{
    auto* bar = new QProgressBar(parent);
    bar->setObjectName(QStringLiteral("generationProgress"));
    bar->setRange(0, 0);
    bar->setMinimumWidth(130); // the Label view fits 1024 px wide
    bar->setMaximumWidth(240); // "40/100 sequences · 1:37 left" whole
    bar->hide();
    return bar;
}

QString generateButtonText(int pairsPerRequest)
{
    return QPushButton::tr("Generate %1 more pairs").arg(pairsPerRequest);
}
QString stopDrawingButtonText() { return QPushButton::tr("Stop drawing pairs"); }
QString stoppingButtonText() { return QPushButton::tr("Stopping…"); }

void fixWidthToLongestText(QPushButton* button, const QStringList& texts)
{
    const QString shown = button->text();
    int widest = 0;
    for (const QString& text : texts) {
        button->setText(text);
        widest = std::max(widest, button->sizeHint().width());
    }
    button->setText(shown);
    button->setFixedWidth(widest);
}

namespace {

/// A count with its time left once the rate is known (`starting` until then).
void showCount(QProgressBar* bar, long long done, long long total, double secondsLeft, const QString& starting,
               const QString& counted, const QString& tip)
{
    bar->setRange(0, int(std::max(1LL, total)));
    bar->setValue(int(std::min(done, total)));
    bar->setTextVisible(true);
    bar->setFormat(secondsLeft < 0 ? starting
                                   : counted.arg(done).arg(total).arg(QString::fromStdString(clockDuration(secondsLeft))));
    bar->setToolTip(tip);
}

} // namespace

void showGenerationProgress(QProgressBar* bar, long long done, long long total, double secondsLeft)
{
    if (done >= total) { // drawn: the pairs are formed (a margin request's scoring shows its own count)
        bar->setRange(0, 0);
        bar->setToolTip(QProgressBar::tr("Forming the new pairs"));
        return;
    }
    showCount(bar, done, total, secondsLeft, QProgressBar::tr("drawing %1 sequences").arg(total),
              QProgressBar::tr("%1/%2 sequences · %3 left"), QProgressBar::tr("Sequences drawn for the new pairs"));
}

void showScoringProgress(QProgressBar* bar, long long done, long long total, double secondsLeft)
{
    showCount(bar, done, total, secondsLeft, QProgressBar::tr("scoring %1 pairs").arg(total),
              QProgressBar::tr("%1/%2 pairs scored · %3 left"),
              QProgressBar::tr("Candidate pairs scored by how sure the model is about them"));
}

QLabel* makeProvenanceLabel(QWidget* parent)
{
    auto* label = new QLabel(parent);
    label->setObjectName(QStringLiteral("provenance"));
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setFocusPolicy(Qt::NoFocus);
    label->setAccessibleName(QLabel::tr("Where this pair comes from"));
    return label;
}

QString ignoredPressText()
{
    return QLabel::tr("Key ignored: it was pressed before this pair was on screen. Press again.");
}

QLabel* makeIgnoredPressLabel(QWidget* parent)
{
    auto* label = new QLabel(ignoredPressText(), parent);
    label->setObjectName(QStringLiteral("ignoredPress"));
    label->setAlignment(Qt::AlignCenter);
    label->setStyleSheet(QStringLiteral("background: #f5a623; color: black; padding: 4px; border-radius: 4px;"));
    QSizePolicy policy = label->sizePolicy();
    policy.setRetainSizeWhenHidden(true); // its row is kept: the buttons under the pair never move
    label->setSizePolicy(policy);
    label->hide();
    return label;
}

QString emptyQueueText(PreferenceStore& store, const std::string& task, const std::string& labeler, bool generating)
{
    qint64 others = 0;
    if (auto pending = store.pendingPairs(100000, "", labeler); pending && !task.empty())
        for (const ShownPair& p : pending.value())
            others += p.task != task ? 1 : 0;
    return emptyQueueText(others, generating);
}

QString emptyQueueText(qint64 others, bool generating)
{
    // The queue follows the model box's task: say where the rest are, so none is out of reach.
    const QString elsewhere =
        others == 0 ? QString()
                    : QLabel::tr("%1 pairs of other tasks are pending: choose a model of their task above to label "
                                 "them (pairs whose model is no longer in the store need a model of their kind: "
                                 "make or import one first).")
                          .arg(others);
    if (generating)
        return QLabel::tr("Generating pairs of this model's task…") + (others ? QStringLiteral("\n") + elsewhere : QString());
    if (others == 0)
        return QLabel::tr("No pairs left to label. Generate more from a model above.");
    return QLabel::tr("No pairs of this model's task left to label. ") + elsewhere;
}

} // namespace d2dpo::ui
