// SPDX-License-Identifier: GPL-3.0-or-later
// One database, two engines: the store's statements are written once, in the SQL that SQLite
// and PostgreSQL share, and run through this small interface (its shape follows SQLiteCpp's,
// which the store used before). Parameters are written `?` or `?N`; PostgreSQL's backend renames
// them `$N`. Each engine lives in its own file (sqlitedatabase.cpp, postgresdatabase.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "store/sql/sqlerror.h"

namespace d2dpo {
class WaitBreaker;
}

namespace d2dpo::sql {

enum class Engine { SQLite, PostgreSQL };

/// One column of the current row, copied out of the engine's buffers.
class Value {
public:
    enum class Type { Null, Integer, Real, Text };
    Value() = default;
    static Value integer(int64_t v);
    static Value real(double v);
    static Value text(std::string v);

    Type type() const { return m_type; }
    bool isNull() const { return m_type == Type::Null; }
    int64_t getInt64() const;
    int getInt() const { return int(getInt64()); }
    double getDouble() const;
    std::string getString() const;

private:
    Type m_type = Type::Null;
    int64_t m_integer = 0;
    double m_real = 0;
    std::string m_text;
};

/// What each engine implements for a statement.
class StatementBackend {
public:
    virtual ~StatementBackend() = default;
    virtual void bindNull(int index) = 0;
    /// A NULL that PostgreSQL knows to be text (`? IS NULL` needs a type; SQLite needs none).
    virtual void bindNullText(int index) = 0;
    virtual void bindInteger(int index, int64_t value) = 0;
    virtual void bindReal(int index, double value) = 0;
    virtual void bindText(int index, const std::string& value) = 0;
    /// A value read from the other engine, as its text when it has no type here: the column it
    /// goes to decides (PostgreSQL reads every value as text).
    virtual void bindValue(int index, const Value& value) = 0;
    /// Bytes as they are (a checkpoint file): SQLite's BLOB, PostgreSQL's BYTEA.
    virtual void bindBlob(int index, const std::string& bytes) = 0;
    virtual std::string columnBlob(int index) const = 0;
    virtual bool step() = 0;
    virtual int64_t changes() = 0;
    virtual Value column(int index) const = 0;
    virtual void reset() = 0;
};

class Database;

/// A prepared statement: bind (1-based), then step through its rows, or exec; reset to run it
/// again (its bindings stay until bound anew).
class Statement {
public:
    Statement(Database& db, const std::string& sql);
    ~Statement();
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    void bind(int index) { m_backend->bindNull(index); }
    void bindNullText(int index) { m_backend->bindNullText(index); }
    void bind(int index, int64_t value) { m_backend->bindInteger(index, value); }
    void bind(int index, int value) { m_backend->bindInteger(index, value); }
    void bind(int index, uint32_t value) { m_backend->bindInteger(index, int64_t(value)); }
    void bind(int index, double value) { m_backend->bindReal(index, value); }
    void bind(int index, const std::string& value) { m_backend->bindText(index, value); }
    void bind(int index, const char* value) { m_backend->bindText(index, value); }
    void bind(int index, const Value& value) { m_backend->bindValue(index, value); }
    void bindBlob(int index, const std::string& bytes) { m_backend->bindBlob(index, bytes); }
    std::string getBlob(int index) const { return m_backend->columnBlob(index); }
    /// The next row; false after the last.
    bool executeStep() { return m_backend->step(); }
    /// Runs it to the end; returns the rows it changed.
    int64_t exec();
    Value getColumn(int index) const { return m_backend->column(index); }
    void reset() { m_backend->reset(); }

private:
    std::unique_ptr<StatementBackend> m_backend;
};

class Database {
public:
    virtual ~Database() = default;
    virtual Engine engine() const = 0;
    /// Runs statements without parameters (a schema, a pragma, a transaction's BEGIN).
    virtual void exec(const std::string& sql) = 0;
    virtual std::unique_ptr<StatementBackend> prepare(const std::string& sql) = 0;
    /// Begins a transaction that writes: it holds the store's one write lock from its first
    /// statement, so what it reads cannot change before it writes (BEGIN IMMEDIATE on SQLite,
    /// a transaction-scoped advisory lock on PostgreSQL).
    virtual void beginWrite() = 0;
    /// The first column of the first row of a query without parameters.
    Value execAndGet(const std::string& sql);
    /// Runs `restore` on each new connection made after a lost one, before anything else is sent
    /// on it: what the server kept per session (advisory locks) is gone with the old one. Only a
    /// server's connection is ever lost; a file's never is.
    virtual void setOnReconnect(std::function<void()> restore) { (void)restore; }
    /// Once `breaker` is tripped, a statement waiting on the server ends at once as a lost
    /// connection, and none connects again. Only a server's waits can be broken; a file's are its
    /// lock's busy timeout.
    virtual void setWaitBreaker(std::shared_ptr<const WaitBreaker> breaker) { (void)breaker; }
};

/// A write transaction (Database::beginWrite), rolled back unless committed.
class WriteTransaction {
public:
    explicit WriteTransaction(Database& db) : m_db(db) { m_db.beginWrite(); }
    WriteTransaction(const WriteTransaction&) = delete;
    WriteTransaction& operator=(const WriteTransaction&) = delete;
    ~WriteTransaction();
    void commit();

private:
    Database& m_db;
    bool m_committed = false;
};

} // namespace d2dpo::sql
