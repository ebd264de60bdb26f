// SPDX-License-Identifier: GPL-3.0-or-later
// The embedded engine: one SQLite file, through SQLite's C interface.
#pragma once

#include "store/sql/sqldatabase.h"

struct sqlite3;

namespace d2dpo::sql {

class SqliteDatabase final : public Database {
public:
    /// Opens (read-write, created when missing) the file at `path`; throws Error.
    explicit SqliteDatabase(const std::string& path);
    ~SqliteDatabase() override;

    Engine engine() const override { return Engine::SQLite; }
    void exec(const std::string& sql) override;
    std::unique_ptr<StatementBackend> prepare(const std::string& sql) override;
    void beginWrite() override { exec("BEGIN IMMEDIATE"); }

    void setBusyTimeout(int milliseconds);
    /// True when SQLite opened the file read-only (its folder or file cannot be written).
    bool isReadOnly() const;
    sqlite3* handle() const { return m_db; }

private:
    sqlite3* m_db = nullptr;
};

/// Throws the Error for SQLite's result code `rc` on `db`.
[[noreturn]] void throwSqliteError(sqlite3* db, int rc, const std::string& context = {});

} // namespace d2dpo::sql
