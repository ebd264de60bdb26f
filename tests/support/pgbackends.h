// SPDX-License-Identifier: GPL-3.0-or-later
// The server processes serving a role on the test server: what a test or benchmark stops with
// SIGSTOP to make a server that hangs rather than refuses (a frozen host, a dead network).
#pragma once

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <libpq-fe.h>

#include "support/pgserver.h"

namespace d2dpo::test {

/// The pids of the backends of `role`'s connections now (the role name is used as is: keep it plain).
inline std::vector<int> backendsOf(PostgresServer& server, const std::string& role)
{
    std::vector<int> pids;
    PGconn* connection = PQconnectdb(server.superuserUrl().c_str());
    PGresult* result = PQexec(connection, ("SELECT pid FROM pg_stat_activity WHERE usename = '" + role + "'").c_str());
    for (int i = 0; PQresultStatus(result) == PGRES_TUPLES_OK && i < PQntuples(result); ++i)
        pids.push_back(std::atoi(PQgetvalue(result, i, 0)));
    PQclear(result);
    PQfinish(connection);
    return pids;
}

/// Stops these server processes (SIGSTOP) while it lives, and lets them go (SIGCONT) when it
/// ends or after `limit` at the latest: a test of code that must not wait on them fails then,
/// rather than hangs.
class StoppedBackends {
public:
    explicit StoppedBackends(std::vector<int> pids, std::chrono::seconds limit = std::chrono::seconds(30))
        : m_pids(std::move(pids))
    {
        for (int pid : m_pids)
            m_stopped = ::kill(pid, SIGSTOP) == 0 && m_stopped;
        m_watchdog = std::thread([this, limit] {
            const auto until = std::chrono::steady_clock::now() + limit;
            while (!m_resume && std::chrono::steady_clock::now() < until)
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            for (int pid : m_pids)
                ::kill(pid, SIGCONT);
        });
    }
    ~StoppedBackends() { resume(); }
    StoppedBackends(const StoppedBackends&) = delete;
    StoppedBackends& operator=(const StoppedBackends&) = delete;
    /// Whether every one of them was stopped.
    bool stopped() const { return m_stopped && !m_pids.empty(); }
    /// Lets them go now.
    void resume()
    {
        m_resume = true;
        if (m_watchdog.joinable())
            m_watchdog.join();
    }

private:
    std::vector<int> m_pids;
    bool m_stopped = true;
    std::atomic<bool> m_resume = false;
    std::thread m_watchdog;
};

} // namespace d2dpo::test
