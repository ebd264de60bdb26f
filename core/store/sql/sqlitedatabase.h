// SPDX-License-Identifier: GPL-3.0-or-later
// The embedded engine: one SQLite file, through SQLite's C interface.
#pragma once

#include <memory>

#include "store/sql/sqldatabase.h"
#include "store/sql/sqlitefileguard.h"

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

    /// The guard against a file copied over this one (sqlitefileguard.h): armed once the store
    /// has marked its file. True when page `page` of the file holds `marker` and the guard is armed.
    bool guardFile(int64_t page, int64_t pageSize, const std::string& marker);
    /// This connection never checkpoints (sqlitefileguard.h: another connection's pages in the WAL
    /// of a file that cannot be told to be theirs).
    void neverCheckpoint() { m_guard->neverCheckpoint(); }
    /// True when the WAL beside the file holds pages not yet in the file (any connection's).
    bool walHoldsPages() const;
    /// False once the file on disk is no longer the one opened (copied over in place).
    bool fileStillOurs() { return m_guard->checkFile(); }
    const SqliteFileGuard& guard() const { return *m_guard; }

private:
    sqlite3* m_db = nullptr;
    std::unique_ptr<SqliteFileGuard> m_guard;
};

/// Throws the Error for SQLite's result code `rc` on `db`.
[[noreturn]] void throwSqliteError(sqlite3* db, int rc, const std::string& context = {});

} // namespace d2dpo::sql
