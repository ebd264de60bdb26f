// SPDX-License-Identifier: GPL-3.0-or-later
// The team engine: a PostgreSQL server, through libpq. The store's URL is libpq's own, so its
// conventions hold: ~/.pgpass or PGPASSFILE, PGSERVICE, sslmode and the other parameters.
#pragma once

#include "store/sql/sqldatabase.h"

struct pg_conn;
struct pg_result;

namespace d2dpo::sql {

class PostgresDatabase final : public Database {
public:
    /// Connects to `url` (postgresql://... or a libpq connection string); throws Error.
    explicit PostgresDatabase(const std::string& url);
    ~PostgresDatabase() override;

    Engine engine() const override { return Engine::PostgreSQL; }
    void exec(const std::string& sql) override;
    std::unique_ptr<StatementBackend> prepare(const std::string& sql) override;
    void beginWrite() override;

    pg_conn* handle() const { return m_connection; }
    /// Whether the connection still stands (false once the server went away or the network broke).
    bool isConnected() const;
    /// Connects again after a lost connection; throws Error when the server still cannot be reached.
    void reconnect();
    /// Before each statement: a connection lost between transactions is made again (a labeler's
    /// next label goes through once the network is back); one lost inside a transaction is an
    /// error, as the server has already rolled that transaction back.
    void ensureConnected();
    bool inTransaction() const { return m_inTransaction; }
    void setOnReconnect(std::function<void()> restore) override { m_onReconnect = std::move(restore); }
    void setWaitBreaker(std::shared_ptr<const WaitBreaker> breaker) override { m_breaker = std::move(breaker); }
    /// Sends a statement with `send` (a PQsendQuery* call) and returns its result as PQexec would;
    /// a server silent for the answer limit (store/sql/postgresanswer.h) is a connection error.
    pg_result* await(const std::function<int()>& send);

private:
    pg_conn* m_connection = nullptr;
    int m_answerLimitSeconds = 30; ///< serverAnswerLimitSeconds(), read once per connection
    bool m_inTransaction = false;
    std::function<void()> m_onReconnect;
    std::shared_ptr<const WaitBreaker> m_breaker;
    bool m_restoring = false;      ///< inside m_onReconnect: its own statements do not call it again
    bool m_restorePending = false; ///< a new connection whose m_onReconnect has not yet succeeded
    void restoreSession();
};

/// True when `name` names a PostgreSQL store rather than an SQLite file.
bool isPostgresUrl(const std::string& name);

} // namespace d2dpo::sql
