// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/train/runhistory.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QListWidget>
#include <QPushButton>
#include <QStringList>
#include <QVBoxLayout>

#include <map>

#include <QtConcurrent/QtConcurrentRun>

#include "jobs/runowner.h"
#include "ui/common/longjobs.h"
#include "ui/common/ownconnection.h"

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
    m_resume = new QPushButton(tr("&Resume"), this);
    m_resume->setObjectName(QStringLiteral("resume"));
    m_resume->setToolTip(tr("Continue the selected stopped or interrupted run from its last checkpoint, with the "
                            "settings it started with"));
    runsLayout->addWidget(m_resume, 0, Qt::AlignRight);

    connect(m_runs, &QListWidget::currentRowChanged, this, [this](int row) {
        updateResume();
        if (row >= 0) {
            m_clickedRun = m_runs->item(row)->data(Qt::UserRole).toLongLong();
            Q_EMIT runSelected(m_clickedRun);
        }
    });
    connect(m_resume, &QPushButton::clicked, this, [this] {
        if (const qint64 run = selectedRun(); run > 0)
            Q_EMIT resumeRequested(run);
    });
    updateResume();
}

void RunHistory::setSelectable(bool selectable)
{
    m_selectable = selectable;
    m_runs->setEnabled(selectable);
    updateResume();
}

qint64 RunHistory::selectedRun() const
{
    const QListWidgetItem* item = m_runs->currentItem();
    return item ? item->data(Qt::UserRole).toLongLong() : 0;
}

void RunHistory::updateResume()
{
    const QListWidgetItem* item = m_runs->currentItem();
    m_resume->setEnabled(m_selectable && item && item->data(Qt::UserRole + 1).toBool());
}

namespace {

/// "from globin.d2dpo · 30 labelled pairs (alice, bob)" or "… · 20000 rule-made pairs": which
/// reference a run started from (its name read once per reference into `names`: runs share a few
/// references, and on a team store each read is a round trip) and which preferences trained it.
QString runOrigin(PreferenceStore& store, std::map<std::string, QString>& names, const RunRecord& run)
{
    auto [known, added] = names.try_emplace(run.referenceModelId);
    if (added) {
        auto reference = store.model(run.referenceModelId);
        known->second = QString::fromStdString(reference && reference->has_value() ? reference->value().name
                                                                                   : run.referenceModelId);
    }
    const QString& from = known->second;
    const QJsonObject config = QJsonDocument::fromJson(QByteArray::fromStdString(run.configJson)).object();
    const QJsonObject prefs = config.value(QStringLiteral("preferences")).toObject();
    const qint64 pairs = prefs.value(QStringLiteral("pairs")).toInteger();
    QString trained;
    if (prefs.value(QStringLiteral("source")).toString() == QLatin1String("store-labels")) {
        QStringList who;
        for (const QJsonValue& l : config.value(QStringLiteral("labelers")).toArray())
            who << l.toString();
        trained = RunHistory::tr("%1 labelled pairs%2")
                      .arg(pairs)
                      .arg(who.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(who.join(QStringLiteral(", "))));
    } else if (prefs.value(QStringLiteral("source")).toString().contains(QLatin1String("measurements"))) {
        trained = RunHistory::tr("%1 pairs with measurements of %2")
                      .arg(pairs)
                      .arg(prefs.value(QStringLiteral("assay")).toString());
    } else if (!prefs.isEmpty()) {
        trained = RunHistory::tr("%1 rule-made pairs").arg(pairs);
    }
    // Who started it where: a run of a team store may train on another machine, in several processes.
    const QJsonObject by = config.value(QStringLiteral("started_by")).toObject();
    QString origin;
    if (!by.isEmpty()) {
        const int processes = by.value(QStringLiteral("processes")).toInt(1);
        origin = RunHistory::tr("started by %1 on %2").arg(by.value(QStringLiteral("user")).toString(),
                                                           by.value(QStringLiteral("host")).toString());
        if (processes > 1)
            origin += RunHistory::tr(", %1 processes").arg(processes);
    }
    return RunHistory::tr("from %1").arg(from) + (trained.isEmpty() ? QString() : QStringLiteral(" · ") + trained) +
           (origin.isEmpty() ? QString() : QStringLiteral(" · ") + origin);
}

} // namespace

RunHistory::Listing RunHistory::readListing(PreferenceStore& store, const std::string& ownLockPath)
{
    Listing listing;
    // A run of another process may have died since the store was opened. A store that cannot
    // say so, or cannot list its runs, is told in the view's log rather than shown as no runs.
    if (auto marked = store.markDeadRunsInterrupted(); !marked)
        listing.problems << tr("could not mark the runs whose process died as interrupted: %1")
                                .arg(QString::fromStdString(marked.error()));
    auto runs = store.runs();
    if (!runs) {
        listing.problems << tr("could not list the past runs: %1").arg(QString::fromStdString(runs.error()));
        return listing;
    }
    listing.ok = true;
    std::map<std::string, QString> names; // each reference's, read once
    for (auto it = runs->rbegin(); it != runs->rend(); ++it) {
        if (it->kind != RunKind::D2dpo)
            continue;
        QString status = QString::fromLatin1(toString(it->status));
        if (runsInAnotherProcess(*it, ownLockPath))
            status = tr("running in another process");
        listing.rows.push_back({qint64(it->id),
                                QStringLiteral("#%1 · %2 · %3 · %4 · %5")
                                    .arg(it->id)
                                    .arg(status, runOrigin(store, names, *it),
                                         QString::fromStdString(it->startedAt).left(16).replace(QLatin1Char('T'),
                                                                                                QLatin1Char(' ')),
                                         QString::fromStdString(it->device)),
                                QString::fromStdString(it->error), isResumable(it->status)});
    }
    return listing;
}

void RunHistory::reload(const std::string& ownLockPath)
{
    ++m_generation; // a background list read before this one is older: it is dropped when it lands
    showListing(readListing(m_store, ownLockPath));
}

void RunHistory::reloadInBackground(const std::string& ownLockPath)
{
    if (!m_listing) {
        m_reader = std::make_shared<OwnConnection>(m_store.path());
        m_listing = new QFutureWatcher<Listing>(this);
        connect(m_listing, &QFutureWatcherBase::finished, this, [this] {
            const Listing listing = m_listing->result();
            const bool current = m_readGeneration == m_generation;
            if (m_again) {
                m_again = false;
                reloadInBackground(m_againLockPath);
            }
            if (current)
                showListing(listing);
        });
    }
    if (m_listing->isRunning()) {
        m_again = true; // the list may change meanwhile: read once more after this one
        m_againLockPath = ownLockPath;
        return;
    }
    m_readGeneration = m_generation;
    m_listing->setFuture(QtConcurrent::run(storeReadPool(), [reader = m_reader, ownLockPath]() -> Listing {
        auto store = reader->get();
        if (!store) {
            Listing failed;
            failed.problems << tr("could not list the past runs: %1").arg(QString::fromStdString(store.error()));
            return failed;
        }
        return readListing(*store.value(), ownLockPath);
    }));
}

void RunHistory::showListing(const Listing& listing)
{
    for (const QString& problem : listing.problems)
        Q_EMIT storeFailed(problem);
    if (!listing.ok)
        return; // the list on screen stays
    const QSignalBlocker block(m_runs);
    // The row the user chose stays chosen (its curves may still be on their way); else the run shown.
    const qint64 chosen = m_clickedRun ? m_clickedRun : m_shownRun;
    m_runs->clear();
    for (const Row& row : listing.rows) {
        auto* item = new QListWidgetItem(row.text, m_runs);
        item->setData(Qt::UserRole, row.id);
        item->setData(Qt::UserRole + 1, row.resumable);
        item->setToolTip(row.error.isEmpty() ? row.text : row.error);
        if (row.id == chosen)
            m_runs->setCurrentItem(item);
    }
    updateResume();
}

} // namespace d2dpo::ui
