// SPDX-License-Identifier: GPL-3.0-or-later
// A statement sent to a PostgreSQL server and its answer awaited with a time limit. libpq's own
// PQexec waits forever: a server that is stopped (SIGSTOP, a hung host) or a network that drops
// packets without a reset would hang the caller, the desktop's window included, with no error.
// Here the limit is on silence, not on the whole statement: a large checkpoint that keeps arriving
// is never cut, but a server that sends nothing for the limit loses the connection, and the
// caller hears a connection error it already knows how to handle (the next statement connects
// again; a transaction cut so was rolled back by the server).
#pragma once

#include <functional>

struct pg_conn;
struct pg_result;

namespace d2dpo {
class WaitBreaker;
}

namespace d2dpo::sql {

/// Seconds of silence after which a statement is abandoned: D2DPO_STORE_ANSWER_SECONDS when set
/// to a whole number from 1 to 86400, else 30.
int serverAnswerLimitSeconds();

/// What a statement came back with: PQexec's result (its last one; nullptr when the statement
/// could not be sent, PQerrorMessage says why), or `silent` when the
/// server sent nothing for the limit and the connection was shut down (PQstatus then says
/// CONNECTION_BAD, and the caller says why in its own words).
struct ServerAnswer {
    pg_result* result = nullptr;
    bool silent = false;
    bool broken = false; ///< the breaker was tripped: the connection was shut down the same way
};

/// Sends a statement with `send` (PQsendQuery or PQsendQueryParams on `connection`, returning
/// its result) and waits for its answer, at most `limitSeconds` of silence at a time, and no longer
/// than until `breaker` (if any) is tripped.
ServerAnswer sendAndAwait(pg_conn* connection, const std::function<int()>& send, int limitSeconds,
                          const WaitBreaker* breaker = nullptr);

} // namespace d2dpo::sql
