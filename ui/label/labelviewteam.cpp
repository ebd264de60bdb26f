// SPDX-License-Identifier: GPL-3.0-or-later
// LabelView on a team store: every choice and undo goes to an outbox on this machine's disk
// (labeling/labeloutbox.h) and a worker thread with its own connection sends them, claims pairs
// and reads the counts (TeamLabelChannel), so a key press never waits on the network: while the
// server is out of reach the labeler goes on with the pairs already leased, and what was chosen
// is written when it is back, or by the next sitting if the window closes first.
#include "ui/label/labelview.h"

#include <QLabel>
#include <QPushButton>
#include <QTimer>

#include <algorithm>

#include "ui/common/ownconnection.h"
#include "ui/label/labelstatsbar.h"
#include "ui/label/labelviewparts.h"
#include "ui/label/modelpicker.h"
#include "ui/label/pairsupply.h"
#include "ui/team/teamlabelchannel.h"

namespace d2dpo::ui {

namespace {
constexpr size_t kTeamRefillBelow = 4; ///< claim more while fewer pairs than this wait behind the one on screen
constexpr int64_t kTeamClaim = 8;      ///< new pairs asked for at a time, on top of those held
constexpr int kDryLookMs = 10000;      ///< with nothing to label, how often to look for new pairs
constexpr int kOutboxCopies = 4;       ///< windows of one role on one store on this machine, each its own outbox
} // namespace

void LabelView::startTeamChannel()
{
    const std::string base = LabelOutbox::defaultPath(m_store.displayName(), m_session.labeler());
    QStringList problems; // another window holding an outbox is no problem; anything else is said
    for (int copy = 1; copy <= kOutboxCopies && !m_outbox; ++copy) {
        auto outbox = LabelOutbox::open(copy == 1 ? base : base + "." + std::to_string(copy));
        if (outbox)
            m_outbox = std::move(outbox.value());
        else if (outbox.errorCode() != ErrorCode::Denied || copy == kOutboxCopies)
            problems << QString::fromStdString(outbox.error());
    }
    if (!m_outbox) { // every label is then written as it is made, on this thread
        reportError(tr("%1; labels are written as they are made").arg(problems.join(QStringLiteral("; "))));
        return;
    }
    if (!problems.isEmpty()) // its choices stay there, unsent, for a person to look at
        reportError(tr("%1; labeling goes on with %2")
                        .arg(problems.join(QStringLiteral("; ")), QString::fromStdString(m_outbox->path())));
    m_session.useOutbox(m_outbox.get());
    m_tasks.readNoMore(); // the tasks come from the worker, never from this thread
    m_team = new TeamLabelChannel(m_store.path(), m_session.labeler(), m_outbox, this);
    if (m_store.canMaintain()) // a maintainer's new pairs are written by the supply, beside the drawing
        m_supply->storeThrough(std::make_shared<OwnConnection>(m_store.path()));
    connect(m_team, &TeamLabelChannel::statusMessage, this, &LabelView::statusMessage);
    connect(m_team, &TeamLabelChannel::claimed, this, &LabelView::onTeamClaim);
    connect(m_team, &TeamLabelChannel::countsRead, this, &LabelView::onTeamCounts);
    connect(m_team, &TeamLabelChannel::modelsRead, this, &LabelView::onTeamModels);
    connect(m_team, &TeamLabelChannel::written, this, [this] {
        updateStatistics();
        Q_EMIT labelsChanged();
    });
    connect(m_team, &TeamLabelChannel::refused, this, [this](qint64 seq, const QString&) {
        m_session.forgetRefused(seq); // said by the channel; no longer this session's to undo
        updateStatistics();
    });
    connect(m_team, &TeamLabelChannel::back, this, [this] {
        m_claimDry = false;
        if (!m_session.current())
            showCurrent();
    });
}

void LabelView::askForPairs()
{
    if (m_session.queued() >= kTeamRefillBelow || m_team->claiming() || m_claimDry || m_team->outOfReach())
        return;
    // Own leases come back first: ask for what is held plus new ones. Chosen pairs still in the
    // outbox count up to one claim's worth: a long backlog (whose leases may have run out) must
    // not take a crowd of fresh pairs from the team.
    const size_t visible = (m_session.current() ? 1 : 0) + m_session.queued();
    const size_t held = std::min(m_session.held(), visible + size_t(kTeamClaim));
    m_team->claim(m_session.task(), int64_t(held) + kTeamClaim);
}

void LabelView::onTeamClaim(const TeamClaim& claim)
{
    for (const auto& [key, task] : claim.tasks)
        m_tasks.add(key, task);
    if (claim.task != m_session.task())
        return askForPairs(); // asked for another task's pairs: the model box has moved on
    const bool had = m_session.current().has_value();
    const size_t added = m_session.addClaimed(claim.pairs);
    m_claimDry = claim.unreachable ? false : added == 0;
    if (m_claimDry && !m_session.current()) // nothing to label now: look again in a while
        QTimer::singleShot(kDryLookMs, this, [this] {
            m_claimDry = false;
            if (m_team && !m_session.current())
                showCurrent();
        });
    if (!had && m_session.current()) {
        showCurrent();
        updateStatistics();
    } else if (!m_session.current()) {
        m_emptyMessage->setText(teamEmptyText());
    }
}

void LabelView::onTeamCounts(const TeamCounts& counts)
{
    if (counts.unreachable) // said by the channel; the bar keeps the last counts
        return showTeamCounts();
    if (!counts.error.empty())
        return reportError(QString::fromStdString(counts.error));
    for (const auto& [key, task] : counts.tasks)
        m_tasks.add(key, task);
    m_teamOthers = counts.otherTasksPending;
    m_teamCounts = std::make_unique<TeamCounts>(counts);
    showTeamCounts();
    if (!m_session.current())
        m_emptyMessage->setText(teamEmptyText());
}

void LabelView::onTeamModels(const TeamModels& read)
{
    if (!read.error.empty()) // the box keeps the models it lists
        return reportError(QString::fromStdString(read.error));
    for (const auto& [key, task] : read.tasks)
        m_tasks.add(key, task);
    m_teamModels.clear();
    for (const ModelRecord& m : read.models)
        m_teamModels.emplace(m.id, m);
    m_models->showModels(read.models, m_tasks);
    if (!m_wantedModel.isEmpty() && m_models->select(m_wantedModel))
        m_wantedModel.clear();
    if (!m_stopping)
        m_generate->setEnabled(m_generating || m_models->count() > 0);
    followPickedTask();
    m_provenance->setText(provenance());
}

void LabelView::showTeamCounts()
{
    if (m_teamCounts)
        m_stats->show(labeler(), m_session.labelledCount(), m_teamCounts->counts, m_teamCounts->labelled,
                      m_team->waiting());
}

QString LabelView::teamEmptyText() const
{
    if (m_team->outOfReach())
        return tr("The team store cannot be reached: pairs appear here when it is back.");
    if (m_team->claiming() || !m_claimDry)
        return tr("Fetching pairs from the team store…");
    if (!m_store.canMaintain()) // a labeler has no model box: the maintainers make the pairs
        return tr("No pairs left for you to label. New pairs appear here as the team's maintainers add them.");
    return emptyQueueText(m_teamOthers, m_supply->busy());
}

} // namespace d2dpo::ui
