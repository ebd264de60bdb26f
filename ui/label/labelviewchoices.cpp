// SPDX-License-Identifier: GPL-3.0-or-later
// LabelView's answers to the pair on screen: a choice (stored, or kept in a team store's outbox),
// an undo, a maintainer's gold mark, and the rule's labels for every pending pair.
#include "ui/label/labelview.h"

#include <optional>

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include "ui/common/longjobs.h"
#include "ui/common/ownconnection.h"
#include "ui/label/autolabel.h"
#include "ui/label/autolabeljob.h"
#include "ui/label/pairsupply.h"
#include "ui/team/teamlabelchannel.h"

namespace d2dpo::ui {

void LabelView::choose(Choice choice)
{
    if (!m_session.current()) {
        showIgnored(m_supply->busy() || m_generating
                        ? tr("Not stored: the next pair is still being drawn. Press again once it shows.")
                        : tr("Not stored: there is no pair to label."));
        return;
    }
    const qint64 elapsed = m_shownAt.elapsed();
    if (m_awaitingPaint) { // meant for the pair before, or a bounce: this pair was not seen yet
        showIgnored();
        return;
    }
    auto outcome = m_session.label(choice, elapsed);
    if (!outcome) {
        reportError(QString::fromStdString(outcome.error())); // nothing stored: the pair stays
        return;
    }
    if (outcome->labelId > 0) {
        Q_EMIT labelled(outcome->pairId);
        Q_EMIT labelsChanged();
    } else if (outcome->outboxSeq > 0) {
        Q_EMIT labelled(outcome->pairId); // kept on disk; labelsChanged follows once the server has it
        m_team->send();
        m_claimDry = false; // the end of the queue: new pairs may be there by now
    } else {
        reportError(QString::fromStdString(outcome->otherwise)); // labelled by someone else first
    }
    showCurrent();
    updateStatistics();
}

void LabelView::markGold(Choice answer)
{
    const std::optional<ShownPair> pair = m_session.current();
    if (!pair) {
        Q_EMIT statusMessage(tr("No pair is shown to make gold"));
        return;
    }
    const auto madeGold = [this, id = pair->id, answer] {
        Q_EMIT statusMessage(tr("Pair %1 is a gold pair now, its answer the %2 sequence: labelers meet it at the "
                                "queue's gold rate, and it is never trained on")
                                 .arg(id)
                                 .arg(answer == Choice::Left ? tr("left") : tr("right")));
        Q_EMIT labelsChanged();
    };
    if (m_team && m_store.canMaintain()) { // written on a connection of its own; the next pair at once
        m_session.setAsideCurrent();
        showCurrent();
        updateStatistics();
        Q_EMIT statusMessage(tr("Making pair %1 a gold pair…").arg(pair->id));
        auto* marking = new QFutureWatcher<std::string>(this);
        connect(marking, &QFutureWatcherBase::finished, this, [this, marking, id = pair->id, madeGold] {
            marking->deleteLater();
            if (const std::string error = marking->result(); !error.empty()) {
                m_session.forgetSetAside(id); // a claim may bring it back
                return reportError(tr("pair %1 is not a gold pair: %2").arg(id).arg(QString::fromStdString(error)));
            }
            madeGold();
        });
        marking->setFuture(
            QtConcurrent::run(storeReadPool(), [url = m_store.path(), id = pair->id, answer]() -> std::string {
                OwnConnection connection(url);
                auto store = connection.get();
                if (!store)
                    return store.error();
                const Status marked = store.value()->markGold(id, answer);
                return marked ? std::string() : marked.error();
            }));
        return;
    }
    if (Status s = m_session.markCurrentGold(answer); !s) {
        reportError(QString::fromStdString(s.error()));
        return;
    }
    madeGold();
    showCurrent();
    updateStatistics();
}

void LabelView::undo()
{
    if (!m_session.canUndo()) {
        Q_EMIT statusMessage(tr("Nothing to undo in this session"));
        return;
    }
    if (m_team) // an auto-labelled batch was written on a connection of its own: taken back there
        if (const auto batch = m_session.latestRulePlan())
            return undoBatchInBackground(*batch);
    auto undone = m_session.undo();
    if (!undone) {
        reportError(QString::fromStdString(undone.error()));
        return;
    }
    if (m_team)
        m_team->send(); // an undo of a label the server has goes the same way, in order
    showCurrent();
    updateStatistics();
    if (!m_team) // on a team store once the server has it (TeamLabelChannel::written)
        Q_EMIT labelsChanged();
    const auto& step = undone.value();
    Q_EMIT statusMessage(step && step->wasRulePlan
                             ? tr("Undid the %1 auto-labels: their pairs are pending again").arg(step->pairIds.size())
                             : tr("Label undone: the pair is shown again"));
}

void LabelView::undoBatchInBackground(const std::vector<int64_t>& labelIds)
{
    if (m_undoingBatch) {
        Q_EMIT statusMessage(tr("Still taking the auto-labels back…"));
        return;
    }
    m_undoingBatch = true;
    Q_EMIT statusMessage(tr("Taking the %1 auto-labels back…").arg(labelIds.size()));
    struct Undone {
        std::vector<ShownPair> pairs;
        std::string error;
    };
    auto* undoing = new QFutureWatcher<Undone>(this);
    connect(undoing, &QFutureWatcherBase::finished, this, [this, undoing, labelIds] {
        undoing->deleteLater();
        m_undoingBatch = false;
        const Undone undone = undoing->result();
        if (!undone.error.empty())
            return reportError(QString::fromStdString(undone.error));
        if (Status s = m_session.undoneElsewhere(labelIds, undone.pairs); !s)
            reportError(QString::fromStdString(s.error()));
        showCurrent();
        updateStatistics();
        Q_EMIT labelsChanged();
        Q_EMIT statusMessage(tr("Undid the %1 auto-labels: their pairs are pending again").arg(labelIds.size()));
    });
    undoing->setFuture(QtConcurrent::run(storeReadPool(), [url = m_store.path(), labelIds]() -> Undone {
        Undone undone;
        OwnConnection connection(url);
        auto store = connection.get();
        if (!store) {
            undone.error = store.error();
            return undone;
        }
        auto pairIds = store.value()->undoLabels(labelIds);
        if (!pairIds) {
            undone.error = pairIds.error();
            return undone;
        }
        for (int64_t id : pairIds.value())
            if (auto pair = store.value()->pair(id))
                undone.pairs.push_back(pair.value());
        return undone;
    }));
}

void LabelView::autoLabelWithRule()
{
    if (m_team) { // read, planned and written off the window's thread; only the question is asked here
        if (m_undoingBatch) {
            Q_EMIT statusMessage(tr("Still taking the last auto-labels back…"));
            return;
        }
        if (!m_autoLabel) {
            m_autoLabel = new AutoLabelJob(m_store.path(), this);
            connect(m_autoLabel, &AutoLabelJob::finished, this,
                    [this](const AutoLabelResult& result, const RuleLabelOutcome& outcome) {
                        RuleLabelOutcome recorded = outcome;
                        if (result.applied)
                            m_session.recordRulePlan(recorded);
                        autoLabelled(result);
                    });
        }
        if (!m_autoLabel->start(this, m_confirmAutoLabel))
            Q_EMIT statusMessage(tr("Already auto-labelling…"));
        else
            Q_EMIT statusMessage(tr("Reading the pending pairs to auto-label…"));
        return;
    }
    autoLabelled(autoLabelPending(this, m_store, m_tasks, m_session, m_confirmAutoLabel));
}

void LabelView::autoLabelled(const AutoLabelResult& result)
{
    if (result.failed)
        return reportError(result.message);
    if (result.applied) {
        showCurrent();
        updateStatistics();
        Q_EMIT labelsChanged();
    }
    if (!result.message.isEmpty())
        Q_EMIT statusMessage(result.message);
}

} // namespace d2dpo::ui
