// SPDX-License-Identifier: GPL-3.0-or-later
// PreferenceStore: pairs handed to labelers under a lease. Many labelers take from one queue at
// once; a pair held by as many of them as it still needs labels is handed to no one else, and a
// lease abandoned (the program killed, the laptop closed) expires, so its pair goes back.
#include "store/preferencestore.h"

#include <algorithm>

#include "store/storeimpl.h"

namespace d2dpo {

Result<std::vector<ShownPair>> LabelQueue::claimPairs(const std::string& labeler, int64_t count, const std::string& task)
{
    if (const std::string problem = labelerNameProblem(labeler); !problem.empty())
        return makeError(problem);
    if (const std::string problem = m_impl->actingForOthersProblem(labeler); !problem.empty())
        return makeError(ErrorCode::Denied, problem);
    count = std::min<int64_t>(count, QueueSettings::kMaxLeasesPerLabeler);
    if (m_impl->labelerOnly()) {
        // A labeler's leases are the server's to make, from a queue only it reads: its lease time,
        // its cap, its checks, its gold pairs mixed in (postgresqueue.cpp).
        return m_impl->guard<std::vector<ShownPair>>("handing out pairs", [&] {
            WriteTransaction transaction(m_impl->db);
            std::vector<ShownPair> claimed =
                serverQueuePairs(m_impl->db, "SELECT d2dpo_claim_pairs(CAST(? AS INTEGER), ?)", [&](sql::Statement& q) {
                    q.bind(1, count);
                    q.bind(2, task);
                });
            transaction.commit();
            return claimed;
        });
    }
    auto settings = queueSettings();
    if (!settings)
        return makeError(settings.errorCode(), settings.error());
    return m_impl->guard<std::vector<ShownPair>>("handing out pairs", [&] {
        sql::Database& db = m_impl->db;
        // Under the write lock: two labelers claiming at once see each other's leases.
        WriteTransaction transaction(db);
        std::vector<ShownPair> claimed;
        {
            // The labeler's own unexpired leases first (a restarted session resumes them), oldest pair first.
            sql::Statement own(db, pairSelectSql(true) + R"sql(
                JOIN active_leases a ON a.pair_id = p.id AND a.labeler = ?1
                WHERE NOT EXISTS (SELECT 1 FROM labels l WHERE l.pair_id = p.id AND l.undone_at IS NULL
                                                          AND l.labeler = ?1)
                  AND (?2 = '' OR ls.task = ?2)
                ORDER BY p.id LIMIT ?3)sql");
            own.bind(1, labeler);
            own.bind(2, task);
            own.bind(3, count);
            while (own.executeStep())
                claimed.push_back(readPair(own));
        }
        if (int64_t(claimed.size()) < count) {
            std::vector<ShownPair> fresh =
                readPending(db, settings.value(), count - int64_t(claimed.size()), task, labeler, true);
            claimed.insert(claimed.end(), fresh.begin(), fresh.end());
        }
        sql::Statement lease(db, std::string("INSERT INTO leases (pair_id, labeler, expires_at) VALUES (?1, ?2, ") +
                                     nowSecondsSql(db) +
                                     " + ?3) ON CONFLICT (pair_id, labeler) DO UPDATE SET "
                                     "expires_at = excluded.expires_at");
        for (const ShownPair& pair : claimed) {
            lease.reset();
            lease.bind(1, pair.id);
            lease.bind(2, labeler);
            lease.bind(3, int64_t(settings->leaseSeconds));
            lease.exec();
        }
        transaction.commit();
        return claimed;
    });
}

Status LabelQueue::releaseLeases(const std::string& labeler)
{
    if (const std::string problem = m_impl->actingForOthersProblem(labeler); !problem.empty())
        return makeError(ErrorCode::Denied, problem);
    return m_impl->guard<Ok>("giving pairs back", [&] {
        if (m_impl->labelerOnly()) { // a labeler deletes nothing itself: the server gives its leases back
            m_impl->db.execAndGet("SELECT d2dpo_release_leases()");
            return Ok{};
        }
        sql::Statement q(m_impl->db, "DELETE FROM leases WHERE labeler = ?");
        q.bind(1, labeler);
        q.exec();
        return Ok{};
    });
}

Result<std::vector<LabelerProgress>> LabelQueue::teamProgress()
{
    return m_impl->guard<std::vector<LabelerProgress>>("reading the team's progress", [&] {
        sql::Statement q(m_impl->db, R"sql(
            SELECT labeler, sum(labels), sum(leased) FROM (
                SELECT labeler, labels, 0 AS leased FROM labeler_tally
                UNION ALL )sql" + std::string(m_impl->labelerOnly()
                                                  ? "SELECT labeler, 0, leased FROM lease_tally" // no pair named
                                                  : "SELECT labeler, 0, count(*) FROM active_leases GROUP BY labeler") +
                                         ") t GROUP BY labeler");
        std::vector<LabelerProgress> out;
        while (q.executeStep())
            out.push_back({q.getColumn(0).getString(), q.getColumn(1).getInt64(), q.getColumn(2).getInt64()});
        // Sorted here, by bytes: a server's collation would order names by its locale.
        std::sort(out.begin(), out.end(), [](const LabelerProgress& a, const LabelerProgress& b) {
            return a.labels != b.labels ? a.labels > b.labels : a.labeler < b.labeler;
        });
        return out;
    });
}

} // namespace d2dpo
