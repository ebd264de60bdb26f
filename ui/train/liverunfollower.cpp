// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/train/liverunfollower.h"
#include "ui/common/longjobs.h"

#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>

#include "base/metricnames.h"
#include "store/preferencestore.h"
#include "ui/common/ownconnection.h"

namespace d2dpo::ui {

namespace {

LiveRunFollower::Look look(OwnConnection& own, qint64 followed)
{
    LiveRunFollower::Look seen;
    seen.followed = followed;
    auto opened = own.get();
    if (!opened)
        return seen; // the network may be down: the next look tries again
    PreferenceStore* connection = opened.value();
    auto runs = connection->runs();
    if (!runs)
        return seen;
    for (const RunRecord& r : runs.value()) {
        seen.runs += std::to_string(r.id) + toString(r.status) + ";";
        if (r.id == followed)
            seen.followedStatus = r.status;
    }
    if (followed > 0 && seen.followedStatus == RunStatus::Running)
        if (auto loss = connection->metricSeries(followed, metric::kLoss))
            seen.points = qint64(loss->size());
    seen.ok = true;
    return seen;
}

} // namespace

LiveRunFollower::LiveRunFollower(PreferenceStore& store, QObject* parent)
    : QObject(parent), m_connection(std::make_shared<OwnConnection>(store.path())),
      m_watcher(new QFutureWatcher<Look>(this)), m_timer(new QTimer(this))
{
    m_timer->setInterval(kPollMs);
    connect(m_timer, &QTimer::timeout, this, &LiveRunFollower::poll);
    connect(m_watcher, &QFutureWatcherBase::finished, this, [this] { onLook(m_watcher->result()); });
    if (store.isTeamStore() && store.canMaintain()) {
        m_timer->start();
        poll();
    }
}

LiveRunFollower::~LiveRunFollower()
{
    // A look on its way holds only its copies (the URL, the shared connection): it ends on its own,
    // and closing the window does not wait for a server that does not answer.
    m_timer->stop();
}

void LiveRunFollower::follow(qint64 runId)
{
    m_followed = runId;
    m_points = 0; // the first look with points redraws it once (points may have come since it was drawn)
}

void LiveRunFollower::poll()
{
    if (m_watcher->isRunning())
        return;
    m_watcher->setFuture(QtConcurrent::run(storeReadPool(),
        [connection = m_connection, followed = m_followed] { return look(*connection, followed); }));
}

void LiveRunFollower::onLook(const Look& seen)
{
    if (!seen.ok)
        return;
    // The first look is taken after the view read its list (it may have missed a run started in
    // between): it counts as a change too.
    const bool changed = !m_looked || seen.runs != m_runs;
    m_runs = seen.runs;
    m_looked = true;
    if (changed)
        Q_EMIT runsChanged();
    if (m_followed <= 0 || seen.followed != m_followed)
        return; // it looked at a run no longer followed
    if (seen.followedStatus != RunStatus::Running) {
        const qint64 ended = m_followed;
        m_followed = 0;
        Q_EMIT followedEnded(ended);
        return;
    }
    if (seen.points >= 0 && seen.points != m_points)
        Q_EMIT followedAdvanced(m_followed);
    if (seen.points >= 0)
        m_points = seen.points;
}

} // namespace d2dpo::ui
