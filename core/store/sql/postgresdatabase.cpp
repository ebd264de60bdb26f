// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/sql/postgresdatabase.h"

#include <algorithm>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include <libpq-fe.h>

#include "base/waitbreaker.h"
#include "store/sql/placeholders.h"
#include "store/sql/postgresanswer.h"

namespace d2dpo::sql {

namespace {

// Types the parameters are sent with (pg_type.h's OIDs), so that `? IS NULL` and the like need
// no cast; a NULL goes untyped, so it fits any column.
constexpr Oid kBytea = 17;
constexpr Oid kInt8 = 20;
constexpr Oid kText = 25;
constexpr Oid kFloat8 = 701;

/// The lock a writing transaction takes first while the store is being created ("D2DP"); once it
/// exists, the lock is on store_meta (beginWrite). As SQLite's BEGIN IMMEDIATE: a check and the
/// write it allows cannot interleave with another client's.
constexpr long long kWriteLock = 0x44324450;

ErrorKind kindOfState(const std::string& state)
{
    if (state.rfind("23", 0) == 0)
        return ErrorKind::Constraint;
    if (state == "42501")
        return ErrorKind::Permission;
    if (state == "40001" || state == "40P01" || state == "55P03")
        return ErrorKind::Busy;
    if (state == "25006")
        return ErrorKind::ReadOnly;
    if (state.rfind("08", 0) == 0 || state.rfind("57P", 0) == 0)
        return ErrorKind::Connection;
    return ErrorKind::Other;
}

std::string trimmed(std::string text)
{
    while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.pop_back();
    return text;
}

/// Throws the error a finished result carries, if any; a lost connection is said as one.
void checkResult(PGconn* connection, PGresult* result)
{
    const ExecStatusType status = result ? PQresultStatus(result) : PGRES_FATAL_ERROR;
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY)
        return;
    const char* stateField = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
    std::string state = stateField ? stateField : "";
    const char* primary = result ? PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
    std::string message = primary ? primary : trimmed(PQerrorMessage(connection));
    if (PQstatus(connection) == CONNECTION_BAD) {
        state = state.empty() ? "08006" : state;
        message = "the connection to the server was lost (" + trimmed(PQerrorMessage(connection)) + ")";
    }
    PQclear(result);
    throw Error(kindOfState(state), message, state);
}

class PostgresStatement final : public StatementBackend {
public:
    PostgresStatement(PostgresDatabase& db, const std::string& sql)
        : m_db(db)
        , m_connection(db.handle())
        , m_sql(numberedPlaceholders(sql, &m_parameters))
    {
    }
    ~PostgresStatement() override { PQclear(m_result); }

    void bindNull(int index) override { set(index, std::nullopt, 0); }
    void bindNullText(int index) override { set(index, std::nullopt, kText); }
    void bindInteger(int index, int64_t value) override { set(index, std::to_string(value), kInt8); }
    void bindReal(int index, double value) override
    {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%.17g", value);
        set(index, std::string(buffer), kFloat8);
    }
    void bindText(int index, const std::string& value) override { set(index, value, kText); }
    void bindBlob(int index, const std::string& bytes) override
    {
        set(index, bytes, kBytea);
        m_binary.resize(m_values.size(), 0);
        m_binary[size_t(index - 1)] = 1; // sent as bytes, not as text
    }
    std::string columnBlob(int index) const override
    {
        if (!m_result || m_row < 0 || PQgetisnull(m_result, m_row, index))
            return {};
        size_t length = 0; // a text-format result holds bytea as hex: \x...
        unsigned char* bytes =
            PQunescapeBytea(reinterpret_cast<const unsigned char*>(PQgetvalue(m_result, m_row, index)), &length);
        if (!bytes)
            throw Error(ErrorKind::Other, "out of memory reading bytes from the server");
        std::string out(reinterpret_cast<const char*>(bytes), length);
        PQfreemem(bytes);
        return out;
    }
    void bindValue(int index, const Value& value) override
    {
        if (value.isNull())
            set(index, std::nullopt, 0);
        else // untyped: the server reads it as the column's type
            set(index, value.getString(), 0);
    }

    bool step() override
    {
        if (!m_result)
            run();
        if (m_row + 1 >= PQntuples(m_result))
            return false;
        ++m_row;
        return true;
    }
    int64_t changes() override
    {
        if (!m_result)
            run();
        const char* tuples = PQcmdTuples(m_result);
        return tuples && *tuples ? std::stoll(tuples) : 0;
    }
    Value column(int index) const override
    {
        if (!m_result || m_row < 0 || PQgetisnull(m_result, m_row, index))
            return {};
        return Value::text(std::string(PQgetvalue(m_result, m_row, index), size_t(PQgetlength(m_result, m_row, index))));
    }
    void reset() override
    {
        PQclear(m_result);
        m_result = nullptr;
        m_row = -1; // the bindings stay, as on SQLite
    }

private:
    bool isRead() const
    {
        const size_t start = m_sql.find_first_not_of(" \n\t");
        return start != std::string::npos && m_sql.compare(start, 6, "SELECT") == 0;
    }
    void set(int index, std::optional<std::string> value, Oid type)
    {
        if (index < 1)
            throw Error(ErrorKind::Other, "parameter index " + std::to_string(index) + " out of range");
        if (size_t(index) > m_values.size()) {
            m_values.resize(size_t(index));
            m_types.resize(size_t(index), 0);
        }
        m_values[size_t(index - 1)] = std::move(value);
        m_types[size_t(index - 1)] = type;
        if (size_t(index) <= m_binary.size())
            m_binary[size_t(index - 1)] = 0; // text unless bindBlob says otherwise
    }
    void run()
    {
        // A parameter never bound is NULL, as on SQLite.
        if (m_values.size() < size_t(m_parameters)) {
            m_values.resize(size_t(m_parameters));
            m_types.resize(size_t(m_parameters), 0);
        }
        m_db.ensureConnected();
        std::vector<const char*> values(m_values.size());
        std::vector<int> lengths(m_values.size(), 0), formats(m_values.size(), 0);
        for (size_t i = 0; i < m_values.size(); ++i) {
            values[i] = m_values[i] ? m_values[i]->data() : nullptr;
            lengths[i] = m_values[i] ? int(m_values[i]->size()) : 0;
            formats[i] = i < m_binary.size() ? m_binary[i] : 0;
        }
        auto execute = [&] {
            return m_db.await([&] {
                return PQsendQueryParams(m_connection, m_sql.c_str(), int(values.size()),
                                         m_types.empty() ? nullptr : m_types.data(), values.data(), lengths.data(),
                                         formats.data(), 0);
            });
        };
        PGresult* result = execute();
        // A read outside a transaction on a connection that died while idle is asked again once,
        // on a new connection: reading twice changes nothing (a write is never sent twice).
        if (!m_db.isConnected() && !m_db.inTransaction() && isRead()) {
            PQclear(result);
            m_db.reconnect();
            result = execute();
        }
        checkResult(m_connection, result);
        m_result = result;
        m_row = -1;
    }

    PostgresDatabase& m_db;
    PGconn* m_connection; ///< the same object after a reconnect (PQreset connects it in place)
    int m_parameters = 0;
    std::string m_sql;
    std::vector<std::optional<std::string>> m_values;
    std::vector<Oid> m_types;
    std::vector<int> m_binary; ///< 1 for a parameter sent as bytes (bindBlob)
    PGresult* m_result = nullptr;
    int m_row = -1;
};

void ignoreNotice(void*, const char*) { } // "already exists, skipping" and the like: nothing for a user

} // namespace

bool isPostgresUrl(const std::string& name)
{
    return name.rfind("postgresql://", 0) == 0 || name.rfind("postgres://", 0) == 0;
}

PostgresDatabase::PostgresDatabase(const std::string& url)
{
    // The server ends each of this connection's waits for another session's lock, and each of its
    // statements, a little before this client would give up waiting for it: a labeler's
    // transaction left open delays a maintainer by that much at most, with the server's own message
    // ("canceling statement due to lock timeout", a busy store), and no server process stays
    // behind, waiting and holding the store's write lock, after its client has gone. The lock's
    // limit is the shorter: a statement's clock starts before its lock wait does. As options of
    // the connection, so that a reconnect (PQreset) keeps them; after the URL, so that they hold
    // whatever it says, and followed by the URL's own options (or PGOPTIONS), which win for the
    // settings they name (PostgreSQL takes the last -c of a name).
    m_answerLimitSeconds = serverAnswerLimitSeconds();
    const int statementSeconds = std::max(2, m_answerLimitSeconds - 2), lockSeconds = statementSeconds - 1;
    std::string options = "-c lock_timeout=" + std::to_string(lockSeconds) + "s -c statement_timeout=" +
                          std::to_string(statementSeconds) + "s";
    std::string theirs;
    if (PQconninfoOption* parsed = PQconninfoParse(url.c_str(), nullptr)) {
        for (const PQconninfoOption* option = parsed; option->keyword; ++option)
            if (std::string(option->keyword) == "options" && option->val)
                theirs = option->val;
        PQconninfoFree(parsed);
    }
    if (const char* environment = std::getenv("PGOPTIONS"); theirs.empty() && environment)
        theirs = environment;
    if (!theirs.empty())
        options += " " + theirs;
    // The URL's own parameters win over the defaults before it (libpq reads them in order).
    const char* keywords[] = {"connect_timeout", "fallback_application_name", "dbname", "options", nullptr};
    const char* values[] = {"10", "d2dpo-studio", url.c_str(), options.c_str(), nullptr};
    m_connection = PQconnectdbParams(keywords, values, 1);
    if (!m_connection)
        throw Error(ErrorKind::Connection, "out of memory while connecting", "08000");
    if (PQstatus(m_connection) != CONNECTION_OK) {
        const std::string message = trimmed(PQerrorMessage(m_connection));
        PQfinish(m_connection);
        m_connection = nullptr;
        throw Error(message.find("authentication failed") != std::string::npos ||
                            message.find("password") != std::string::npos
                        ? ErrorKind::Permission
                        : ErrorKind::Connection,
                    message, "08001");
    }
    PQsetNoticeProcessor(m_connection, ignoreNotice, nullptr);
}

PostgresDatabase::~PostgresDatabase() { PQfinish(m_connection); }

void PostgresDatabase::exec(const std::string& sql)
{
    const bool begins = sql.rfind("BEGIN", 0) == 0;
    const bool ends = sql == "COMMIT" || sql == "ROLLBACK";
    if (ends) {
        m_inTransaction = false;
        if (sql == "ROLLBACK" && !isConnected())
            return; // the server rolled it back when the connection went
    } else {
        ensureConnected();
    }
    auto execute = [&] { return await([&] { return PQsendQuery(m_connection, sql.c_str()); }); };
    PGresult* result = execute();
    if (begins && !isConnected()) { // died while idle: nothing was begun, so begin on a new connection
        PQclear(result);
        reconnect();
        result = execute();
    }
    checkResult(m_connection, result);
    if (begins)
        m_inTransaction = true;
}

std::unique_ptr<StatementBackend> PostgresDatabase::prepare(const std::string& sql)
{
    return std::make_unique<PostgresStatement>(*this, sql);
}

void PostgresDatabase::beginWrite()
{
    exec("BEGIN");
    try {
        // The store's write lock: EXCLUSIVE on store_meta, which only those who may write the
        // store can take (a labeler cannot hold it and stall everyone; its functions take it
        // themselves, postgresaccess.cpp). Before the store exists, while it is being created, an
        // advisory lock stands in.
        exec("DO $$ BEGIN IF to_regclass('public.store_meta') IS NULL THEN PERFORM pg_advisory_xact_lock(" +
             std::to_string(kWriteLock) +
             "); ELSIF has_table_privilege('public.store_meta', 'UPDATE') THEN "
             "LOCK TABLE public.store_meta IN EXCLUSIVE MODE; END IF; END $$");
    } catch (const Error&) {
        try {
            exec("ROLLBACK");
        } catch (const Error&) {
        }
        throw;
    }
}

PGresult* PostgresDatabase::await(const std::function<int()>& send)
{
    const ServerAnswer answer = sendAndAwait(m_connection, send, m_answerLimitSeconds, m_breaker.get());
    if (answer.broken)
        throw Error(ErrorKind::Connection,
                    std::string("the wait for the server was given up (its window is closing): nothing more is "
                                "sent on this connection") +
                        (m_inTransaction ? ", and the server rolls back the transaction" : ""),
                    "08006");
    if (answer.silent)
        throw Error(ErrorKind::Connection,
                    "the server sent nothing for " + std::to_string(m_answerLimitSeconds) +
                        " s (stopped, out of reach, or holding the statement behind another client's long "
                        "write), so the connection was closed" +
                        (m_inTransaction ? " and the server rolls back the transaction" : "") +
                        " (D2DPO_STORE_ANSWER_SECONDS sets this limit)",
                    "08006");
    return answer.result;
}

bool PostgresDatabase::isConnected() const { return PQstatus(m_connection) == CONNECTION_OK; }

void PostgresDatabase::ensureConnected()
{
    if (isConnected()) {
        if (!m_inTransaction)
            restoreSession(); // a restore that failed halfway is tried again first
        return;
    }
    if (m_inTransaction)
        throw Error(ErrorKind::Connection,
                    "the connection to the server was lost in the middle of a transaction; none of it was written",
                    "08006");
    reconnect();
}

void PostgresDatabase::reconnect()
{
    if (m_breaker && m_breaker->tripped()) // a connect may wait its connect_timeout: not after that
        throw Error(ErrorKind::Connection, "not connecting again: the wait for the server was given up", "08006");
    PQreset(m_connection);
    if (PQstatus(m_connection) != CONNECTION_OK)
        throw Error(ErrorKind::Connection, trimmed(PQerrorMessage(m_connection)), "08001");
    m_restorePending = true;
    restoreSession();
}

void PostgresDatabase::restoreSession()
{
    if (!m_restorePending || !m_onReconnect || m_restoring)
        return;
    m_restoring = true;
    try {
        m_onReconnect();
    } catch (...) {
        m_restoring = false; // pending still: tried again before the next statement
        throw;
    }
    m_restoring = false;
    m_restorePending = false;
}

} // namespace d2dpo::sql
