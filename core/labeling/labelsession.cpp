// SPDX-License-Identifier: GPL-3.0-or-later
#include "labeling/labelsession.h"

#include <algorithm>

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
    if (m_store.isTeamStore() && m_unsent.empty())
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
    auto pending = m_store.isTeamStore() ? m_store.claimPairs(m_labeler, kTeamClaim, m_task)
                                         : m_store.pendingPairs(kQueueRead, m_task, m_labeler);
    if (!pending)
        return makeError(pending.error());
    auto kept = [&](int64_t id) {
        return std::any_of(m_unsent.begin(), m_unsent.end(), [id](const Unsent& u) { return u.pair.id == id; });
    };
    for (ShownPair& p : pending.value())
        if ((!m_current || p.id != m_current->id) && !kept(p.id)) // a kept choice's pair is still leased to us
            m_queue.push_back(std::move(p));
    return Ok{};
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
    if (!m_unsent.empty()) // what cannot be written yet stays kept, and this choice waits behind it
        if (auto flushed = flushUnsent(); flushed) {
            labelled.keptWritten = flushed->written;
            labelled.keptRefused = flushed->refused;
        }
    auto keep = [&] {
        m_unsent.push_back({*m_current, choice, decideMs});
        labelled.kept = true;
        advanceQueued();
        return labelled;
    };
    if (!m_unsent.empty())
        return keep(); // in the order they were made
    auto id = m_store.addLabel(m_current->id, choice, m_labeler, decideMs);
    if (!id) {
        if (id.errorCode() == ErrorCode::Unreachable)
            return keep();
        if (id.errorCode() != ErrorCode::AlreadyLabelled)
            return makeError(id.errorCode(), id.error()); // nothing stored: the pair stays
        labelled.otherwise = id.error();
    } else {
        labelled.labelId = id.value();
        ++m_labelled;
        m_undoSteps.push_back({{id.value()}, false});
    }
    if (Status s = advance(); !s)
        return makeError(s.errorCode(), s.error());
    return labelled;
}

void LabelSession::advanceQueued()
{
    m_current.reset();
    if (!m_queue.empty()) {
        m_current = std::move(m_queue.front());
        m_queue.pop_front();
    }
}

Result<int64_t> LabelSession::ownLabel(int64_t pairId)
{
    auto mine = m_store.labelledPairs(m_labeler);
    if (!mine)
        return makeError(mine.errorCode(), mine.error());
    for (const auto& [pair, label] : mine.value())
        if (pair.id == pairId)
            return label.id;
    return int64_t(0);
}

Result<LabelSession::Flushed> LabelSession::flushUnsent()
{
    Flushed flushed;
    while (!m_unsent.empty()) {
        const Unsent& u = m_unsent.front();
        auto id = m_store.addLabel(u.pair.id, u.choice, m_labeler, u.decideMs);
        int64_t labelId = id ? id.value() : 0;
        if (!id && id.errorCode() == ErrorCode::Unreachable)
            return makeError(ErrorCode::Unreachable, id.error()); // still out of reach: all stay kept
        if (!id && id.errorCode() == ErrorCode::AlreadyLabelled) {
            auto own = ownLabel(u.pair.id); // the first attempt's commit may have gone through
            if (!own)
                return makeError(own.errorCode(), own.error());
            labelId = own.value();
        }
        if (labelId > 0) {
            ++flushed.written;
            ++m_labelled;
            m_undoSteps.push_back({{labelId}, false});
        } else {
            flushed.refused.push_back(id.error());
        }
        m_unsent.erase(m_unsent.begin());
    }
    if (!m_current)
        if (Status s = advance(); !s)
            return makeError(s.errorCode(), s.error());
    return flushed;
}

Result<std::optional<LabelSession::Undone>> LabelSession::undo()
{
    if (!m_unsent.empty()) { // a kept choice was never written: taking it back needs no store
        const ShownPair pair = m_unsent.back().pair;
        m_unsent.pop_back();
        if (m_current)
            m_queue.push_front(*m_current);
        m_current = pair;
        return std::optional(Undone{{pair.id}, false});
    }
    if (m_undoSteps.empty())
        return std::optional<Undone>();
    const Step step = m_undoSteps.back();
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
    if (m_current)
        m_queue.push_front(*m_current);
    for (ShownPair& p : again) // the latest undone comes first
        m_queue.push_front(std::move(p));
    m_current.reset();
    if (Status s = advance(); !s)
        return makeError(s.error());
    return std::optional(Undone{undone.value(), step.rulePlan});
}

Result<StoredPairs> LabelSession::addGenerated(const ModelRecord& model, const std::vector<ShownPair>& pairs,
                                               bool first, const GeneratedMargins& margins)
{
    auto stored = storeGeneratedPairs(m_store, model, pairs, margins);
    if (!stored)
        return stored;
    if (first) {
        if (m_current)
            m_queue.push_front(*m_current);
        m_queue.insert(m_queue.begin(), stored->pairs.begin(), stored->pairs.end());
        m_current.reset();
        if (Status s = advance(); !s)
            return makeError(s.error());
    } else if (!m_current) {
        m_queue.clear(); // the store's pending pairs, the new ones among them, oldest first
        if (Status s = advance(); !s)
            return makeError(s.error());
    } else {
        m_queue.insert(m_queue.end(), stored->pairs.begin(), stored->pairs.end());
    }
    return stored;
}

RuleLabelOutcome LabelSession::applyRulePlan(RuleLabeler& labeler, const RuleLabelPlan& plan)
{
    RuleLabelOutcome outcome = labeler.apply(m_store, plan);
    if (!outcome.labelIds.empty())
        m_undoSteps.push_back({outcome.labelIds, true});
    m_queue.clear();
    m_current.reset();
    if (Status s = advance(); !s && outcome.error.empty())
        outcome.error = s.error();
    return outcome;
}

} // namespace d2dpo
