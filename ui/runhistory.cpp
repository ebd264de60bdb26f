// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/runhistory.h"

#include <QListWidget>
#include <QVBoxLayout>

namespace d2dpo::ui {

RunHistory::RunHistory(PreferenceStore& store, QWidget* parent)
    : QGroupBox(tr("Past runs (select to show their curves)"), parent)
    , m_store(store)
{
    auto* runsLayout = new QVBoxLayout(this);
    m_runs = new QListWidget(this);
    m_runs->setObjectName(QStringLiteral("runs"));
    m_runs->setMinimumHeight(90);
    runsLayout->addWidget(m_runs);

    connect(m_runs, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row >= 0)
            Q_EMIT runSelected(m_runs->item(row)->data(Qt::UserRole).toLongLong());
    });
}

void RunHistory::setSelectable(bool selectable) { m_runs->setEnabled(selectable); }

void RunHistory::reload(bool training)
{
    const QSignalBlocker block(m_runs);
    m_runs->clear();
    auto runs = m_store.runs();
    if (!runs)
        return;
    bool newest = true;
    for (auto it = runs->rbegin(); it != runs->rend(); ++it) {
        if (it->kind != "d2dpo")
            continue;
        // "running" is only certain for this window's own run (the newest, while it trains):
        // any other was cut short by a closed or killed process, or runs in another one.
        QString status = QString::fromStdString(it->status);
        if (it->status == "running" && !(newest && training))
            status = tr("interrupted or running elsewhere");
        newest = false;
        auto* item = new QListWidgetItem(QStringLiteral("#%1 · %2 · %3 · %4")
                                             .arg(it->id)
                                             .arg(status,
                                                  QString::fromStdString(it->startedAt).left(16).replace(QLatin1Char('T'), QLatin1Char(' ')),
                                                  QString::fromStdString(it->device)),
                                         m_runs);
        item->setData(Qt::UserRole, qint64(it->id));
        if (!it->error.empty())
            item->setToolTip(QString::fromStdString(it->error));
        if (it->id == m_shownRun)
            m_runs->setCurrentItem(item);
    }
}

} // namespace d2dpo::ui
