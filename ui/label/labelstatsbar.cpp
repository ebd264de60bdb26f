// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/label/labelstatsbar.h"

#include <QGridLayout>
#include <QLabel>
#include <QPushButton>

#include "store/labelstats.h"
#include "labeling/taskcatalog.h"

namespace d2dpo::ui {

LabelStatsBar::LabelStatsBar(PreferenceStore& store, TaskCatalog& tasks, QWidget* parent)
    : QWidget(parent)
    , m_store(store)
    , m_tasks(tasks)
{
    m_counters = new QLabel(this);
    m_counters->setObjectName(QStringLiteral("counters"));
    m_statistics = new QLabel(this);
    m_statistics->setObjectName(QStringLiteral("statistics"));
    m_autoLabel = new QPushButton(tr("Auto-label pending pairs with their task's rule"), this);
    m_autoLabel->setFocusPolicy(Qt::NoFocus); // keys go to the view, never to a focused button
    m_autoLabel->setMinimumHeight(36);
    m_autoLabel->setObjectName(QStringLiteral("autoLabelButton"));
    m_autoLabel->setVisible(store.canMaintain()); // a team's labeler labels as itself, never as a rule
    m_autoLabel->setToolTip(tr("For simulations: each pair is labelled by its task's rule; invalid loses to valid "
                               "and equal ranks tie. Recorded under the labeler name rule:<the rule>."));
    // The counters say how much; the report says how well (agreement, gold accuracy, each labeler).
    m_labelers = new QPushButton(tr("Labelers…"), this);
    m_labelers->setObjectName(QStringLiteral("labelersButton"));
    m_labelers->setFocusPolicy(Qt::NoFocus);
    m_labelers->setMinimumHeight(36);
    m_labelers->setToolTip(tr("How the labelers agree with each other and with the gold pairs (View ▸ Labelers…)"));
    auto* bottom = new QGridLayout(this);
    bottom->setContentsMargins(0, 0, 0, 0);
    bottom->addWidget(m_counters, 0, 0);
    bottom->addWidget(m_statistics, 1, 0);
    bottom->addWidget(m_labelers, 0, 1, 2, 1, Qt::AlignRight | Qt::AlignVCenter);
    bottom->addWidget(m_autoLabel, 0, 2, 2, 1, Qt::AlignRight | Qt::AlignVCenter);
    bottom->setColumnStretch(0, 1);

    connect(m_autoLabel, &QPushButton::clicked, this, &LabelStatsBar::autoLabelClicked);
    connect(m_labelers, &QPushButton::clicked, this, &LabelStatsBar::labelersClicked);
}

void LabelStatsBar::refresh(const QString& labelerName, int sessionCount)
{
    const std::string labeler = labelerName.toStdString();
    auto counts = m_store.counts(labeler);
    if (!counts) {
        Q_EMIT failed(QString::fromStdString(counts.error()));
        return;
    }
    auto labelled = m_store.labelledPairs(labeler);
    if (!labelled) {
        Q_EMIT failed(QString::fromStdString(labelled.error()));
        return;
    }
    show(labelerName, sessionCount, counts.value(), labelled.value(), 0);
}

void LabelStatsBar::show(const QString& labelerName, int sessionCount, const LabelCounts& c,
                         const std::vector<std::pair<ShownPair, LabelRecord>>& labelled, size_t waiting)
{
    m_counters->setText(tr("This session: <b>%1</b> · %2 in total: <b>%3</b> · all labelers: %4 · pending: %5 · "
                           "usable for training: %6")
                            .arg(sessionCount)
                            .arg(labelerName.toHtmlEscaped())
                            .arg(c.byLabeler)
                            .arg(c.labelled)
                            .arg(c.pending)
                            .arg(c.decisive) +
                        (waiting == 0 ? QString()
                                      : tr(" · <b>%1 kept here</b>, not yet on the team store").arg(waiting)));
    const LabelStats s =
        computeLabelStats(labelled, [this](const ShownPair& pair) { return m_tasks.ruleChoice(pair); });
    // A task without a rule has nothing to agree with: only the left-pick rate is said for it.
    const QString leftPicks = tr("left picks: <b>%1%</b> of %2 (50% = no position bias)")
                                  .arg(100 * s.leftPickRate, 0, 'f', 0)
                                  .arg(s.decisive);
    m_statistics->setText(s.decisive == 0 && s.compared == 0
                              ? tr("Left-pick rate and agreement with a rule appear after the first labels")
                          : s.compared == 0 ? tr("No rule to agree with for these labels' task · %1").arg(leftPicks)
                                            : tr("Agreement with the task's rule: <b>%1%</b> of %2 · %3")
                                                  .arg(100 * s.ruleAgreement, 0, 'f', 0)
                                                  .arg(s.compared)
                                                  .arg(leftPicks));
}

} // namespace d2dpo::ui
