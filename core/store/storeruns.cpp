// SPDX-License-Identifier: GPL-3.0-or-later
// PreferenceStore: the training runs, their status, and their metric series.
#include "store/preferencestore.h"

#include <set>

#include "base/runlock.h"
#include "base/timeutil.h"
#include "store/storeimpl.h"

namespace d2dpo {

namespace {

// On a team store a run's process may be on another machine, where its run lock file cannot be
// seen. There the run holds a session-level advisory lock ("D2RU", run id) on its connection
// instead: the server drops it with the connection when the process dies, whatever the machine.
constexpr const char* kRunLockClass = "1144148565"; // 0x44325255

void holdTeamRunLock(sql::Database& db, int64_t runId)
{
    sql::Statement q(db, std::string("SELECT pg_advisory_lock(") + kRunLockClass + ", CAST(? AS INTEGER))");
    q.bind(1, runId);
    q.exec();
}

/// After a lost connection (a server restart, a network cut) the locks went with it: each run this
/// store still runs takes its lock again, and one that a maintainer's look marked interrupted
/// meanwhile is running again, as it never stopped.
void restoreRunLocks(sql::Database& db, const std::set<int64_t>& runs)
{
    for (int64_t runId : runs) {
        holdTeamRunLock(db, runId);
        sql::Statement alive(db, "UPDATE runs SET status = 'running', error = '', finished_at = '' "
                                 "WHERE id = ? AND status = 'interrupted'");
        alive.bind(1, runId);
        alive.exec();
    }
}

/// Holds a team run's lock on this connection, and on each one after a lost one.
void holdRun(sql::Database& db, std::set<int64_t>& liveRuns, int64_t runId)
{
    holdTeamRunLock(db, runId);
    liveRuns.insert(runId);
    db.setOnReconnect([&db, &liveRuns] { restoreRunLocks(db, liveRuns); });
}

} // namespace

Result<int64_t> RunLog::startRun(const RunRecord& run)
{
    return m_impl->guard<int64_t>("recording the run", [&] {
        // On a team store the run's lock is taken before its row is seen: another window checking
        // which runs are alive between the two would mark it interrupted (the lock outlives the
        // transaction: it is the session's).
        sql::WriteTransaction transaction(m_impl->db);
        sql::Statement q(m_impl->db, "INSERT INTO runs (kind, reference_model_id, config_json, device, status, "
                                     "started_at, lock_path) VALUES (?, ?, ?, ?, 'running', ?, ?) RETURNING id");
        q.bind(1, std::string(toString(run.kind)));
        bindOptionalText(q, 2, run.referenceModelId);
        q.bind(3, run.configJson);
        q.bind(4, run.device);
        q.bind(5, run.startedAt.empty() ? utcNow() : run.startedAt);
        q.bind(6, run.lockPath);
        const int64_t id = insertReturningId(q);
        if (m_impl->team())
            holdRun(m_impl->db, m_impl->liveRuns, id);
        transaction.commit();
        return id;
    });
}

Status RunLog::appendMetrics(int64_t runId, int64_t step, const std::map<std::string, double>& values)
{
    return m_impl->guard<Ok>("recording metrics", [&] {
        sql::WriteTransaction transaction(m_impl->db);
        sql::Statement q(m_impl->db, "INSERT INTO run_metrics (run_id, name, step, value) VALUES (?, ?, ?, ?) "
                                     "ON CONFLICT (run_id, name, step) DO UPDATE SET value = excluded.value");
        for (const auto& [name, value] : values) {
            q.reset();
            q.bind(1, runId);
            q.bind(2, name);
            q.bind(3, step);
            q.bind(4, value);
            q.exec();
        }
        transaction.commit();
        return Ok{};
    });
}

Status RunLog::appendMetrics(int64_t runId, const std::vector<MetricPoint>& points)
{
    return m_impl->guard<Ok>("recording metrics", [&] {
        sql::WriteTransaction transaction(m_impl->db);
        sql::Statement q(m_impl->db, "INSERT INTO run_metrics (run_id, name, step, value) VALUES (?, ?, ?, ?) "
                                     "ON CONFLICT (run_id, name, step) DO UPDATE SET value = excluded.value");
        for (const MetricPoint& point : points) {
            q.reset();
            q.bind(1, runId);
            q.bind(2, point.name);
            q.bind(3, point.step);
            q.bind(4, point.value);
            q.exec();
        }
        transaction.commit();
        return Ok{};
    });
}

Status RunLog::finishRun(int64_t runId, RunStatus status, const std::string& error, const std::string& resultModelId)
{
    return m_impl->guard<Ok>("finishing the run", [&] {
        sql::Statement q(m_impl->db, "UPDATE runs SET status = ?, error = ?, result_model_id = ?, finished_at = ? "
                                     "WHERE id = ?");
        q.bind(1, toString(status));
        q.bind(2, error);
        bindOptionalText(q, 3, resultModelId);
        q.bind(4, utcNow());
        q.bind(5, runId);
        q.exec();
        if (m_impl->team()) {
            sql::Statement unlock(m_impl->db,
                                  std::string("SELECT pg_advisory_unlock(") + kRunLockClass + ", CAST(? AS INTEGER))");
            unlock.bind(1, runId);
            unlock.exec();
            m_impl->liveRuns.erase(runId);
        }
        return Ok{};
    });
}

namespace {

constexpr const char* kRunColumns = "SELECT id, kind, reference_model_id, result_model_id, config_json, device, "
                                    "status, error, started_at, finished_at, lock_path FROM runs ";

RunRecord readRun(sql::Statement& q)
{
    return {q.getColumn(0).getInt64(), runKindFromString(q.getColumn(1).getString()), nullableText(q.getColumn(2)),
            nullableText(q.getColumn(3)), q.getColumn(4).getString(), q.getColumn(5).getString(),
            // The schema's CHECK allows only the five spellings runStatusFromString reads.
            runStatusFromString(q.getColumn(6).getString()).value_or(RunStatus::Failed), q.getColumn(7).getString(),
            q.getColumn(8).getString(), q.getColumn(9).getString(), q.getColumn(10).getString()};
}

} // namespace

Status RunLog::reopenRun(int64_t runId, const std::string& lockPath, int64_t fromStep)
{
    return m_impl->guard<Ok>("resuming the run", [&]() -> Ok {
        sql::WriteTransaction transaction(m_impl->db);
        sql::Statement q(m_impl->db, "UPDATE runs SET status = 'running', error = '', finished_at = '', "
                                     "lock_path = ? WHERE id = ? AND status IN ('stopped', 'interrupted')");
        q.bind(1, lockPath);
        q.bind(2, runId);
        if (q.exec() != 1)
            throw sql::Error(sql::ErrorKind::Other, "run " + std::to_string(runId) + " is not stopped or interrupted");
        sql::Statement drop(m_impl->db, "DELETE FROM run_metrics WHERE run_id = ? AND step > ? AND "
                                        "name NOT LIKE 'reference/%'");
        drop.bind(1, runId);
        drop.bind(2, fromStep);
        drop.exec();
        transaction.commit();
        if (m_impl->team())
            holdRun(m_impl->db, m_impl->liveRuns, runId); // alive again, in this process
        return Ok{};
    });
}

Result<int64_t> RunLog::markDeadRunsInterrupted()
{
    return m_impl->guard<int64_t>("checking which runs are alive", [&] {
        // One write transaction from the read to the update: a run reopened by another process in
        // between cannot be marked dead from a stale read.
        WriteTransaction transaction(m_impl->db);
        std::vector<int64_t> dead;
        {
            // A team's run is alive while some session holds its advisory lock (pg_locks shows every
            // session's); a file's run while a process holds its lock file.
            sql::Statement q(m_impl->db,
                             m_impl->team()
                                 ? std::string(
                                       "SELECT id, '', EXISTS (SELECT 1 FROM pg_locks k WHERE "
                                       "k.locktype = 'advisory' AND k.granted AND CAST(k.classid AS BIGINT) = ") +
                                       kRunLockClass +
                                       " AND CAST(k.objid AS BIGINT) = runs.id "
                                       "AND k.objsubid = 2) "
                                       "FROM runs WHERE status = 'running'"
                                 : "SELECT id, lock_path, 0 FROM runs WHERE status = 'running'");
            while (q.executeStep())
                if (m_impl->team() ? q.getColumn(2).getInt() == 0 : !runLockHeld(q.getColumn(1).getString()))
                    dead.push_back(q.getColumn(0).getInt64());
        }
        sql::Statement mark(m_impl->db,
                            "UPDATE runs SET status = 'interrupted', finished_at = ?, error = 'the process running "
                            "it ended without stopping it (killed, crashed or the machine went down)' "
                            "WHERE id = ? AND status = 'running'");
        for (int64_t id : dead) {
            mark.reset();
            mark.bind(1, utcNow());
            mark.bind(2, id);
            mark.exec();
        }
        mark.reset();
        transaction.commit();
        return int64_t(dead.size());
    });
}

Result<std::vector<RunRecord>> RunLog::runs()
{
    return m_impl->guard<std::vector<RunRecord>>("listing runs", [&] {
        sql::Statement q(m_impl->db, std::string(kRunColumns) + "ORDER BY id");
        std::vector<RunRecord> out;
        while (q.executeStep())
            out.push_back(readRun(q));
        return out;
    });
}

Result<std::optional<RunRecord>> RunLog::run(int64_t id)
{
    return m_impl->guard<std::optional<RunRecord>>("reading a run", [&]() -> std::optional<RunRecord> {
        sql::Statement q(m_impl->db, std::string(kRunColumns) + "WHERE id = ?");
        q.bind(1, id);
        if (!q.executeStep())
            return std::nullopt;
        return readRun(q);
    });
}

Result<std::vector<std::pair<int64_t, double>>> RunLog::metricSeries(int64_t runId, const std::string& name)
{
    return m_impl->guard<std::vector<std::pair<int64_t, double>>>("reading metrics", [&] {
        sql::Statement q(m_impl->db, "SELECT step, value FROM run_metrics WHERE run_id = ? AND name = ? ORDER BY step");
        q.bind(1, runId);
        q.bind(2, name);
        std::vector<std::pair<int64_t, double>> out;
        while (q.executeStep())
            out.emplace_back(q.getColumn(0).getInt64(), q.getColumn(1).getDouble());
        return out;
    });
}

} // namespace d2dpo
