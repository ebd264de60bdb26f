// SPDX-License-Identifier: GPL-3.0-or-later
// A real, private PostgreSQL server for the suites of the store's team engine: no mocks, so the
// SQL, the roles and the password authentication the engine relies on are PostgreSQL's own.
// One server per test process, in a fresh folder under /tmp, reachable through a Unix socket only.
// Torch-free and engine-free (Qt Core and libpq only), so it builds while the store does not.
#pragma once

#include <cstdlib>
#include <string>
#include <sys/types.h>

namespace d2dpo::test {

/// The PostgreSQL server of this test process. Started on first use: initdb into a fresh folder
/// /tmp/d2dpo-pg-XXXXXX (superuser `postgres` with a random password, scram-sha-256 for every
/// connection, no TCP listener), then `postgres` with durability off for speed. Stopped, and its
/// folder removed, when the process exits. Run as the user `nobody` when the tests run as root, as
/// PostgreSQL refuses root. If the test process dies without exiting (kill -9, a crash), the
/// kernel kills the server with it (the parent-death signal); the folder it leaves is removed by
/// the next process that starts a server. Thread-safe.
class PostgresServer {
public:
    /// This process's server, started on the first call (about a second); nullptr when it cannot
    /// run here, and then unavailableReason() says why. A failed start is not retried.
    static PostgresServer* shared();
    /// Why shared() is null (what is missing, or the server's log); empty when it is not.
    static std::string unavailableReason();

    /// The folder holding the server's socket (and its data, in data/).
    std::string socketDir() const { return m_dir; }
    /// The port; with no TCP listener it only names the socket file (.s.PGSQL.<port>).
    int port() const { return m_port; }

    /// A libpq URI: postgresql://USER:PASSWORD@/DATABASE?host=SOCKETDIR&port=PORT, every part
    /// percent-encoded (so any password and the socket's path survive).
    std::string url(const std::string& user, const std::string& password, const std::string& database) const;
    /// url() for the superuser `postgres` with its password.
    std::string superuserUrl(const std::string& database = "postgres") const
    {
        return url("postgres", m_password, database);
    }

    /// A fresh empty database named prefix_N (N unique within the process), owned by `owner` (a
    /// role, who then also owns its public schema) or by the superuser when empty; its name, or
    /// an empty string with *error set on failure. The name is used as is (quoted): keep the
    /// prefix lowercase letters, digits and '_' so that unquoted SQL can name it too.
    std::string createDatabase(const std::string& prefix, const std::string& owner = {},
                               std::string* error = nullptr);
    /// Runs `sql` (one or more statements) as the superuser in `database`, on a connection of its
    /// own; false with *error set to the server's message on failure.
    bool exec(const std::string& database, const std::string& sql, std::string* error = nullptr);
    /// A login role with that password. When it already exists its password is set to this one
    /// (nothing is dropped), so a suite may call it again with the same name.
    bool createLoginRole(const std::string& role, const std::string& password, std::string* error = nullptr);

    PostgresServer(const PostgresServer&) = delete;
    PostgresServer& operator=(const PostgresServer&) = delete;

private:
    PostgresServer() = default;
    /// Starts a server in a new folder; false with `reason` set.
    bool start(std::string& reason);
    /// Stops the server and removes its folder (at exit).
    void stop();
    static void stopAtExit();
    /// D2DPO_PG_DURABLE=1: fsync, full-page writes and synchronous commit on (for benchmarks).
    static bool durable()
    {
        const char* value = std::getenv("D2DPO_PG_DURABLE");
        return value && std::string(value) == "1";
    }

    std::string m_dir;      ///< /tmp/d2dpo-pg-XXXXXX: the socket, data/, the server's log
    std::string m_password; ///< the superuser's, random per process
    int m_port = 0;
    pid_t m_postmaster = -1; ///< our child: setpriv exec'ed into postgres
    pid_t m_owner = -1;      ///< the test process (a forked child must not stop the server)
};

} // namespace d2dpo::test
