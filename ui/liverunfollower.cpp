// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/liverunfollower.h"

#include <QTimer>

#include "base/metricnames.h"
#include "store/preferencestore.h"

namespace d2dpo::ui {

LiveRunFollower::LiveRunFollower(PreferenceStore& store, QObject* parent)
    : QObject(parent), m_store(store), m_timer(new QTimer(this))
{
    m_timer->setInterval(kPollMs);
    connect(m_timer, &QTimer::timeout, this, &LiveRunFollower::poll);
    if (m_store.isTeamStore() && m_store.canMaintain()) {
        m_timer->start();
        poll(); // what the view shows now: later looks report what changed since
    }
}

void LiveRunFollower::follow(qint64 runId)
{
    m_followed = runId;
    m_points = 0;
    if (runId > 0)
        if (auto loss = m_store.metricSeries(runId, metric::kLoss))
            m_points = loss->size();
}

void LiveRunFollower::poll()
{
    auto runs = m_store.runs();
    if (!runs)
        return; // the network may be down: the next look tries again
    std::string now;
    RunStatus followedStatus = RunStatus::Interrupted;
    for (const RunRecord& r : runs.value()) {
        now += std::to_string(r.id) + toString(r.status) + ";";
        if (r.id == m_followed)
            followedStatus = r.status;
    }
    const bool changed = m_looked && now != m_runs;
    m_runs = now;
    m_looked = true;
    if (changed)
        Q_EMIT runsChanged();
    if (m_followed <= 0)
        return;
    if (followedStatus != RunStatus::Running) {
        const qint64 ended = m_followed;
        m_followed = 0;
        Q_EMIT followedEnded(ended);
        return;
    }
    if (auto loss = m_store.metricSeries(m_followed, metric::kLoss); loss && loss->size() != m_points) {
        m_points = loss->size();
        Q_EMIT followedAdvanced(m_followed);
    }
}

} // namespace d2dpo::ui
