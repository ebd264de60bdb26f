// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/sql/sqlitedatabase.h"

#include <sqlite3.h>
#include <sys/stat.h>

namespace d2dpo::sql {

namespace {

ErrorKind kindOf(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return ErrorKind::Busy;
    case SQLITE_READONLY:
        return ErrorKind::ReadOnly;
    case SQLITE_NOTADB:
        return ErrorKind::NotADatabase;
    case SQLITE_CONSTRAINT:
        return ErrorKind::Constraint;
    case SQLITE_PERM:
    case SQLITE_AUTH:
        return ErrorKind::Permission;
    default:
        return ErrorKind::Other;
    }
}

class SqliteStatement final : public StatementBackend {
public:
    SqliteStatement(sqlite3* db, const std::string& sql, SqliteFileGuard& guard) : m_db(db), m_guard(guard)
    {
        const int rc = sqlite3_prepare_v2(db, sql.c_str(), int(sql.size()), &m_statement, nullptr);
        if (rc != SQLITE_OK)
            throwSqliteError(db, rc);
    }
    ~SqliteStatement() override { sqlite3_finalize(m_statement); }

    void bindNull(int index) override { check(sqlite3_bind_null(m_statement, index)); }
    void bindNullText(int index) override { bindNull(index); }
    void bindInteger(int index, int64_t value) override { check(sqlite3_bind_int64(m_statement, index, value)); }
    void bindReal(int index, double value) override { check(sqlite3_bind_double(m_statement, index, value)); }
    void bindText(int index, const std::string& value) override
    {
        check(sqlite3_bind_text(m_statement, index, value.data(), int(value.size()), SQLITE_TRANSIENT));
    }
    void bindValue(int index, const Value& value) override
    {
        switch (value.type()) {
        case Value::Type::Null:
            return bindNull(index);
        case Value::Type::Integer:
            return bindInteger(index, value.getInt64());
        case Value::Type::Real:
            return bindReal(index, value.getDouble());
        case Value::Type::Text:
            return bindText(index, value.getString()); // the column's affinity makes "12" an integer
        }
    }
    void bindBlob(int index, const std::string& bytes) override
    {
        check(sqlite3_bind_blob64(m_statement, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT));
    }
    std::string columnBlob(int index) const override
    {
        const auto* data = static_cast<const char*>(sqlite3_column_blob(m_statement, index));
        return data ? std::string(data, size_t(sqlite3_column_bytes(m_statement, index))) : std::string();
    }
    bool step() override
    {
        const int rc = sqlite3_step(m_statement);
        if (rc == SQLITE_ROW)
            return true;
        if (rc == SQLITE_DONE) {
            m_changes = sqlite3_changes64(m_db);
            return false;
        }
        if (m_guard.replaced())
            throw Error(ErrorKind::Other, m_guard.replacedMessage());
        throwSqliteError(m_db, rc);
    }
    int64_t changes() override { return m_changes; }
    Value column(int index) const override
    {
        switch (sqlite3_column_type(m_statement, index)) {
        case SQLITE_NULL:
            return {};
        case SQLITE_INTEGER:
            return Value::integer(sqlite3_column_int64(m_statement, index));
        case SQLITE_FLOAT:
            return Value::real(sqlite3_column_double(m_statement, index));
        default: {
            const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(m_statement, index));
            return Value::text(std::string(text, size_t(sqlite3_column_bytes(m_statement, index))));
        }
        }
    }
    void reset() override
    {
        sqlite3_reset(m_statement); // its error, if any, was thrown by the step that met it; bindings stay
        m_changes = 0;
    }

private:
    void check(int rc)
    {
        if (rc != SQLITE_OK)
            throwSqliteError(m_db, rc);
    }
    sqlite3* m_db;
    SqliteFileGuard& m_guard;
    sqlite3_stmt* m_statement = nullptr;
    int64_t m_changes = 0;
};

} // namespace

void throwSqliteError(sqlite3* db, int rc, const std::string& context)
{
    const int extended = db ? sqlite3_extended_errcode(db) : rc;
    std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    if (!context.empty())
        message = context + ": " + message;
    throw Error(kindOf(rc), message, std::to_string(extended));
}

SqliteDatabase::SqliteDatabase(const std::string& path)
{
    const int rc = sqlite3_open_v2(path.c_str(), &m_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    if (rc != SQLITE_OK) {
        const std::string message = m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc);
        sqlite3_close(m_db);
        m_db = nullptr;
        throw Error(kindOf(rc), message, std::to_string(rc));
    }
    sqlite3_extended_result_codes(m_db, 1);
    try {
        m_guard = std::make_unique<SqliteFileGuard>(m_db, path);
    } catch (...) {
        sqlite3_close_v2(m_db);
        throw;
    }
}

SqliteDatabase::~SqliteDatabase()
{
    try {
        m_guard->beforeClose();
    } catch (...) { // out of memory reading a page: close anyway (unhooked, the guard cannot be reached)
        sqlite3_wal_hook(m_db, nullptr, nullptr);
    }
    sqlite3_close_v2(m_db);
}

void SqliteDatabase::exec(const std::string& sql)
{
    if (m_guard->replaced())
        throw Error(ErrorKind::Other, m_guard->replacedMessage());
    const int rc = sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) {
        if (m_guard->replaced())
            throw Error(ErrorKind::Other, m_guard->replacedMessage());
        throwSqliteError(m_db, rc);
    }
}

std::unique_ptr<StatementBackend> SqliteDatabase::prepare(const std::string& sql)
{
    if (m_guard->replaced())
        throw Error(ErrorKind::Other, m_guard->replacedMessage());
    return std::make_unique<SqliteStatement>(m_db, sql, *m_guard);
}

void SqliteDatabase::setBusyTimeout(int milliseconds)
{
    sqlite3_busy_timeout(m_db, milliseconds);
    m_guard->setBusyTimeout(milliseconds);
}

bool SqliteDatabase::walHoldsPages() const
{
    const char* name = sqlite3_db_filename(m_db, "main");
    struct stat wal {};
    constexpr off_t kWalHeaderBytes = 32; // a WAL of its header alone holds no page
    return name && *name && ::stat((std::string(name) + "-wal").c_str(), &wal) == 0 && wal.st_size > kWalHeaderBytes;
}

bool SqliteDatabase::guardFile(int64_t page, int64_t pageSize, const std::string& marker)
{
    return m_guard->arm(page, pageSize, marker);
}

bool SqliteDatabase::isReadOnly() const { return sqlite3_db_readonly(m_db, "main") == 1; }

} // namespace d2dpo::sql
