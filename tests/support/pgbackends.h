// SPDX-License-Identifier: GPL-3.0-or-later
// The server processes serving a role on the test server: what a test or benchmark stops with
// SIGSTOP to make a server that hangs rather than refuses (a frozen host, a dead network).
#pragma once

#include <cstdlib>
#include <string>
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

} // namespace d2dpo::test
