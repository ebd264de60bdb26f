// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/sql/postgresanswer.h"

#include "base/waitbreaker.h"

#include <cerrno>
#include <cstdlib>

#include <libpq-fe.h>
#include <poll.h>
#include <sys/socket.h>

namespace d2dpo::sql {

namespace {

enum class Wait { Ready, Silent, Broken, Failed };

/// Waits until the connection's socket is ready for `events`, for at most `limitMs`, or until
/// `breaker` is tripped.
Wait waitFor(PGconn* connection, short events, int limitMs, const WaitBreaker* breaker)
{
    if (breaker && breaker->tripped())
        return Wait::Broken;
    pollfd fds[2] = {{PQsocket(connection), events, 0}, {breaker ? breaker->fd() : -1, POLLIN, 0}};
    if (fds[0].fd < 0)
        return Wait::Failed;
    for (;;) {
        const int ready = poll(fds, 2, limitMs); // poll skips a negative fd: no breaker, no pipe
        if (ready > 0 && fds[1].revents != 0)
            return Wait::Broken;
        if (ready > 0)
            return Wait::Ready;
        if (ready == 0)
            return Wait::Silent;
        if (errno != EINTR) // a signal (a stop request's) is not the server's answer: wait on
            return Wait::Failed;
    }
}

/// Ends a connection whose server went silent (or that its caller stopped waiting on). Shutting the socket down makes libpq read an end
/// of file: its status becomes CONNECTION_BAD, from which the next statement connects again (the
/// server rolls back whatever transaction the connection had open once it notices).
ServerAnswer abandon(PGconn* connection, Wait why)
{
    ::shutdown(PQsocket(connection), SHUT_RDWR);
    PQconsumeInput(connection);
    while (PGresult* late = PQgetResult(connection))
        PQclear(late);
    return {nullptr, why == Wait::Silent, why == Wait::Broken};
}

} // namespace

int serverAnswerLimitSeconds()
{
    if (const char* text = std::getenv("D2DPO_STORE_ANSWER_SECONDS")) {
        char* end = nullptr;
        const long seconds = std::strtol(text, &end, 10);
        if (end != text && *end == '\0' && seconds >= 1 && seconds <= 86400)
            return int(seconds);
    }
    return 30;
}

ServerAnswer sendAndAwait(PGconn* connection, const std::function<int()>& send, int limitSeconds,
                          const WaitBreaker* breaker)
{
    const int limitMs = limitSeconds * 1000;
    if (breaker && breaker->tripped()) // given up already: the statement is not sent at all
        return {nullptr, false, true};
    // Non-blocking, so that sending a large statement (a checkpoint's bytes) to a server that
    // stopped reading cannot block in the kernel either.
    PQsetnonblocking(connection, 1);
    if (!send())
        return {};
    // Send what libpq still holds; a server sending meanwhile must be read, or both sides wait.
    for (int pending = PQflush(connection); pending != 0; pending = PQflush(connection)) {
        if (pending < 0)
            break; // the connection broke: PQgetResult below reports it
        const Wait wait = waitFor(connection, POLLIN | POLLOUT, limitMs, breaker);
        if (wait == Wait::Silent || wait == Wait::Broken)
            return abandon(connection, wait);
        if (wait == Wait::Failed || !PQconsumeInput(connection))
            break;
    }
    PGresult* kept = nullptr;
    for (;;) {
        while (PQisBusy(connection)) {
            const Wait wait = waitFor(connection, POLLIN, limitMs, breaker);
            if (wait == Wait::Broken) {
                PQclear(kept);
                return abandon(connection, wait);
            }
            // Read once more before giving up: over TLS, the answer's end may sit decrypted in
            // the TLS library while the socket itself is quiet.
            if (wait == Wait::Silent && (!PQconsumeInput(connection) || PQisBusy(connection))) {
                PQclear(kept);
                return abandon(connection, wait);
            }
            if (wait == Wait::Failed || !PQconsumeInput(connection))
                break; // the error is PQgetResult's to report
        }
        PGresult* result = PQgetResult(connection);
        if (!result)
            break;
        // As PQexec (libpq 14 and later): the last result. A statement that fails stops the rest
        // of its string, and a connection lost after a server's error ends with that loss.
        PQclear(kept);
        kept = result; // on a lost connection libpq ends with an error result, then nullptr
    }
    return {kept, false};
}

} // namespace d2dpo::sql
