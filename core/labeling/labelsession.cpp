// SPDX-License-Identifier: GPL-3.0-or-later
#include "labeling/labelsession.h"

#include <algorithm>
#include <set>

namespace d2dpo {

namespace {
constexpr int64_t kQueueRead = 500; // pending pairs read into the queue at a time
// On a team store pairs are taken under a lease, a few at a time: what one labeler holds, the
// others are not handed past the overlap.
constexpr int64_t kTeamClaim = 8;
} // namespace

LabelSession::LabelSession(PreferenceStore& store, std::string labeler)
    : m_store(store), m_labeler(store.isTeamStore() ? store.teamIdentity() : std::move(labeler))
{
}

LabelSession::~LabelSession()
{
    if (m_store.isTeamStore() && !m_outbox)
        (void)m_store.releaseLeases(m_labeler); // the others may take them now, not after the lease
}

void LabelSession::setLabeler(std::string labeler)
{
    if (m_store.isTeamStore())
        return; // on a team store the labeler is the database role, never a typed name
    if (labeler == m_labeler)
        return;
    m_labeler = std::move(labeler);
    m_undoSteps.clear();
    m_labelled = 0;
}

Status LabelSession::refill()
{
    if (m_outbox)
        return Ok{}; // pairs are claimed on the writer's connection, never from the window's thread
    auto pending = m_store.isTeamStore() ? m_store.claimPairs(m_labeler, kTeamClaim, m_task)
                                         : m_store.pendingPairs(kQueueRead, m_task, m_labeler);
    if (!pending)
        return makeError(pending.error());
    for (ShownPair& p : pending.value())
        if (!m_current || p.id != m_current->id)
            m_queue.push_back(std::move(p));
    return Ok{};
}

size_t LabelSession::addClaimed(const std::vector<ShownPair>& pairs)
{
    // Own leases come back first in a claim: those held here already (queued, on screen, or chosen
    // and still in the outbox, its lease kept until the label is written) are passed over.
    std::set<int64_t> held = m_outbox ? m_outbox->pendingPairIds() : std::set<int64_t>();
    held.insert(m_labelledPairs.begin(), m_labelledPairs.end());
    held.insert(m_setAside.begin(), m_setAside.end());
    if (m_current)
        held.insert(m_current->id);
    for (const ShownPair& p : m_queue)
        held.insert(p.id);
    size_t added = 0;
    for (const ShownPair& p : pairs)
        if ((m_task.empty() || p.task == m_task) && held.insert(p.id).second) {
            m_queue.push_back(p);
            ++added;
        }
    if (!m_current)
        advanceQueued();
    return added;
}

size_t LabelSession::held() const
{
    return (m_current ? 1 : 0) + m_queue.size() + (m_outbox ? m_outbox->pendingPairIds().size() : 0);
}

void LabelSession::forgetRefused(int64_t outboxSeq)
{
    const auto step = std::find_if(m_undoSteps.begin(), m_undoSteps.end(),
                                   [outboxSeq](const Step& s) { return s.outboxSeq == outboxSeq; });
    if (step == m_undoSteps.end())
        return;
    m_undoSteps.erase(step);
    m_labelled = std::max(0, m_labelled - 1);
}

void LabelSession::setTask(std::string taskKey)
{
    if (taskKey == m_task)
        return;
    m_task = std::move(taskKey);
    m_queue.clear();
    if (m_current && !m_task.empty() && m_current->task != m_task)
        m_current.reset(); // still pending in the store: nothing is lost
}

Status LabelSession::advance()
{
    m_current.reset();
    if (m_queue.empty())
        if (Status s = refill(); !s)
            return s;
    if (!m_queue.empty()) {
        m_current = std::move(m_queue.front());
        m_queue.pop_front();
    }
    return Ok{};
}

Result<LabelSession::Labelled> LabelSession::label(Choice choice, int64_t decideMs)
{
    if (!m_current)
        return makeError(ErrorCode::NotFound, "no pair to label");
    Labelled labelled;
    labelled.pairId = m_current->id;
    if (m_outbox) { // on this machine's disk now; the writer sends it
        auto seq = m_outbox->addLabel(*m_current, choice, decideMs);
        if (!seq)
            return makeError(seq.errorCode(), seq.error()); // nothing kept: the pair stays
        labelled.outboxSeq = seq.value();
        m_labelledPairs.insert(m_current->id);
        ++m_labelled;
        m_undoSteps.push_back({{}, false, seq.value(), *m_current});
        advanceQueued();
        return labelled;
    }
    auto id = m_store.addLabel(m_current->id, choice, m_labeler, decideMs);
    if (!id) {
        if (id.errorCode() != ErrorCode::AlreadyLabelled)
            return makeError(id.errorCode(), id.error()); // nothing stored: the pair stays
        labelled.otherwise = id.error();
    } else {
        labelled.labelId = id.value();
        ++m_labelled;
        m_undoSteps.push_back({{id.value()}, false, 0, {}});
    }
    if (Status s = advance(); !s)
        return makeError(s.errorCode(), s.error());
    return labelled;
}

Status LabelSession::markCurrentGold(Choice answer)
{
    if (!m_current)
        return makeError(ErrorCode::NotFound, "no pair is shown");
    if (m_outbox)
        return makeError(ErrorCode::Denied, "a team store's labeler cannot mark gold pairs; its maintainer can");
    if (Status s = m_store.markGold(m_current->id, answer); !s)
        return s;
    return advance();
}

std::optional<ShownPair> LabelSession::setAsideCurrent()
{
    std::optional<ShownPair> aside = m_current;
    if (aside) {
        m_setAside.insert(aside->id);
        advanceQueued();
    }
    return aside;
}

void LabelSession::advanceQueued()
{
    m_current.reset();
    if (!m_queue.empty()) {
        m_current = std::move(m_queue.front());
        m_queue.pop_front();
    }
}

Result<std::optional<LabelSession::Undone>> LabelSession::undoOutboxStep(const Step& step)
{
    // Dropped unsent, or undone by the writer after it sent the label: either way in order, and
    // the pair comes back from memory.
    auto undone = m_outbox->undo(step.outboxSeq);
    if (!undone)
        return makeError(undone.errorCode(), undone.error());
    m_undoSteps.pop_back();
    m_labelled = std::max(0, m_labelled - 1);
    m_labelledPairs.erase(step.pair.id);
    if (m_current)
        m_queue.push_front(*m_current);
    m_current = step.pair;
    return std::optional(Undone{{step.pair.id}, false});
}

Result<std::optional<LabelSession::Undone>> LabelSession::undo()
{
    if (m_undoSteps.empty())
        return std::optional<Undone>();
    const Step step = m_undoSteps.back();
    if (step.outboxSeq > 0)
        return undoOutboxStep(step);
    auto undone = m_store.undoLabels(step.labelIds);
    if (!undone)
        return makeError(undone.error());
    m_undoSteps.pop_back();
    if (!step.rulePlan)
        m_labelled = std::max(0, m_labelled - int(undone->size()));
    // Read every pair first: a failure leaves the queue as it was.
    std::vector<ShownPair> again;
    for (int64_t pairId : undone.value()) {
        auto pair = m_store.pair(pairId);
        if (!pair)
            return makeError(pair.error());
        again.push_back(pair.value());
    }
    if (Status s = showAgain(again); !s)
        return makeError(s.error());
    return std::optional(Undone{undone.value(), step.rulePlan});
}

Status LabelSession::showAgain(const std::vector<ShownPair>& pairs)
{
    std::set<int64_t> again;
    for (const ShownPair& p : pairs)
        again.insert(p.id);
    // A pair held already (queued) moves to the front rather than coming twice.
    m_queue.erase(std::remove_if(m_queue.begin(), m_queue.end(), [&](const ShownPair& p) { return again.count(p.id); }),
                  m_queue.end());
    if (m_current && !again.count(m_current->id))
        m_queue.push_front(*m_current);
    for (const ShownPair& p : pairs) // the latest undone comes first
        m_queue.push_front(p);
    m_current.reset();
    return advance();
}

std::optional<std::vector<int64_t>> LabelSession::latestRulePlan() const
{
    if (m_undoSteps.empty() || !m_undoSteps.back().rulePlan)
        return std::nullopt;
    return m_undoSteps.back().labelIds;
}

Status LabelSession::undoneElsewhere(const std::vector<int64_t>& labelIds, const std::vector<ShownPair>& pairs)
{
    const auto step = std::find_if(m_undoSteps.rbegin(), m_undoSteps.rend(),
                                   [&](const Step& s) { return s.rulePlan && s.labelIds == labelIds; });
    const bool known = step != m_undoSteps.rend();
    if (known)
        m_undoSteps.erase(std::next(step).base());
    // The store took them back either way: their pairs are pending again.
    if (Status s = showAgain(pairs); !s || known)
        return s;
    return makeError(ErrorCode::NotFound, "no applied rule plan of this session has these labels");
}

Result<StoredPairs> LabelSession::addGenerated(const ModelRecord& model, const std::vector<ShownPair>& pairs,
                                               QueuePlace place, const GeneratedMargins& margins)
{
    auto stored = storeGeneratedPairs(m_store, model, pairs, margins);
    if (!stored)
        return stored;
    if (Status s = queueGenerated(stored->pairs, place); !s)
        return makeError(s.error());
    return stored;
}

Status LabelSession::queueGenerated(const std::vector<ShownPair>& stored, QueuePlace place)
{
    if (place == QueuePlace::AfterNext && m_current && !stored.empty()) {
        // Behind the pairs of the same model at the queue's front (an earlier piece placed Next),
        // ahead of the rest: the pair on screen stays.
        const std::string& modelId = stored.front().leftModelId;
        const auto end = std::find_if(m_queue.begin(), m_queue.end(),
                                      [&](const ShownPair& p) { return p.leftModelId != modelId; });
        m_queue.insert(end, stored.begin(), stored.end());
    } else if (place != QueuePlace::Last) {
        if (m_current)
            m_queue.push_front(*m_current);
        m_queue.insert(m_queue.begin(), stored.begin(), stored.end());
        m_current.reset();
        return advance();
    } else if (!m_current) {
        m_queue.clear(); // the store's pending pairs, the new ones among them, oldest first (with
                         // an outbox: claimed anew)
        return advance();
    } else {
        m_queue.insert(m_queue.end(), stored.begin(), stored.end());
    }
    return Ok{};
}

RuleLabelOutcome LabelSession::applyRulePlan(RuleLabeler& labeler, const RuleLabelPlan& plan)
{
    RuleLabelOutcome outcome = labeler.apply(m_store, plan);
    recordRulePlan(outcome);
    return outcome;
}

void LabelSession::recordRulePlan(RuleLabelOutcome& outcome)
{
    if (!outcome.labelIds.empty())
        m_undoSteps.push_back({outcome.labelIds, true, 0, {}});
    m_queue.clear(); // read again (with an outbox: claimed anew)
    m_current.reset();
    if (Status s = advance(); !s && outcome.error.empty())
        outcome.error = s.error();
}

} // namespace d2dpo
