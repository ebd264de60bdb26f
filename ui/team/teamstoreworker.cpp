// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/team/teamstoreworker.h"

namespace d2dpo::ui {

TeamStoreWorker::TeamStoreWorker(std::string url, std::string labeler, std::shared_ptr<LabelOutbox> outbox)
    : m_connection(std::move(url)), m_labeler(std::move(labeler)), m_outbox(std::move(outbox))
{
}

TeamStoreWorker::~TeamStoreWorker() = default;

void TeamStoreWorker::readNewTasks(const std::vector<std::string>& keys,
                                   std::vector<std::pair<std::string, TaskInfo>>& out)
{
    for (const std::string& key : keys)
        if (m_connection.isOpen() && m_tasksSent.insert(key).second) {
            if (auto info = TaskInfo::fromStore(*m_connection.get().value(), key))
                out.emplace_back(key, info.value());
            else
                m_tasksSent.erase(key); // asked again next time
        }
}

void TeamStoreWorker::send()
{
    OutboxReport report;
    if (auto store = m_connection.get(); !store) {
        report.unreachable = true;
        report.error = store.error();
        report.pending = m_outbox->pendingCount();
    } else {
        report = sendOutbox(*m_outbox, *store.value(), m_labeler);
    }
    // What waited for the server goes now, and its answer decides whether the server is back.
    if (!report.unreachable && m_claimWanted) {
        claim(m_claimTask, m_claimCount);
        if (m_claimWanted) {
            report.unreachable = true;
            report.error = m_lastError;
        }
    }
    if (!report.unreachable && m_countsWanted) {
        readCounts(m_countsTask, m_countsOthers);
        if (m_countsWanted) {
            report.unreachable = true;
            report.error = m_lastError;
        }
    }
    Q_EMIT sent(report);
}

void TeamStoreWorker::claim(const std::string& task, int64_t count)
{
    TeamClaim claim;
    claim.task = task;
    auto store = m_connection.get();
    auto pairs = store ? store.value()->claimPairs(m_labeler, count, task) : makeError(store.errorCode(), store.error());
    m_claimWanted = !pairs && pairs.errorCode() == ErrorCode::Unreachable;
    m_claimTask = task;
    m_claimCount = count;
    if (!pairs) {
        m_lastError = pairs.error();
        claim.error = pairs.error();
        claim.unreachable = m_claimWanted;
        Q_EMIT claimed(claim);
        return;
    }
    // Each pair's task (its alphabet and rule), read here once, so showing a pair reads nothing.
    std::vector<std::string> keys;
    for (const ShownPair& pair : pairs.value())
        keys.push_back(pair.task);
    readNewTasks(keys, claim.tasks);
    claim.pairs = std::move(pairs.value());
    Q_EMIT claimed(claim);
}

void TeamStoreWorker::readCounts(const std::string& task, bool otherTasks)
{
    TeamCounts counts;
    m_countsTask = task;
    m_countsOthers = otherTasks;
    auto failed = [&](const std::string& error, ErrorCode code) {
        m_lastError = error;
        counts.error = error;
        counts.unreachable = m_countsWanted = code == ErrorCode::Unreachable;
        Q_EMIT countsRead(counts);
    };
    auto store = m_connection.get();
    if (!store)
        return failed(store.error(), store.errorCode());
    PreferenceStore& s = *store.value();
    auto c = s.counts(m_labeler);
    if (!c)
        return failed(c.error(), c.errorCode());
    auto labelled = s.labelledPairs(m_labeler);
    if (!labelled)
        return failed(labelled.error(), labelled.errorCode());
    if (otherTasks && !task.empty()) {
        auto pending = s.pendingPairs(100000, "", m_labeler);
        if (!pending)
            return failed(pending.error(), pending.errorCode());
        for (const ShownPair& p : pending.value())
            counts.otherTasksPending += p.task != task ? 1 : 0;
    }
    m_countsWanted = false;
    std::vector<std::string> keys; // the statistics compare each label with its task's rule
    for (const auto& [pair, label] : labelled.value())
        keys.push_back(pair.task);
    readNewTasks(keys, counts.tasks);
    counts.counts = c.value();
    counts.labelled = std::move(labelled.value());
    Q_EMIT countsRead(counts);
}

void TeamStoreWorker::readModels()
{
    auto store = m_connection.get();
    if (store && !store.value()->canMaintain())
        return; // a labeler reads no models: pairs then name their models by id
    TeamModels read;
    auto models = store ? store.value()->models() : makeError(store.errorCode(), store.error());
    if (!models) {
        read.error = models.error();
        Q_EMIT modelsRead(read);
        return;
    }
    std::vector<std::string> keys; // the Model box names each model's task
    for (const ModelRecord& m : models.value())
        keys.push_back(m.taskKey);
    readNewTasks(keys, read.tasks);
    read.models = std::move(models.value());
    Q_EMIT modelsRead(read);
}

void TeamStoreWorker::finish()
{
    if (m_connection.isOpen() || m_outbox->pendingCount() > 0)
        send();
    if (m_connection.isOpen() && m_outbox->pendingCount() == 0)
        (void)m_connection.get().value()->releaseLeases(m_labeler); // the others may take them now, not after the lease
    m_connection.close();
}

} // namespace d2dpo::ui
