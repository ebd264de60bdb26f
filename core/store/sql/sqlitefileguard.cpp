// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/sql/sqlitefileguard.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include <sqlite3.h>

namespace d2dpo::sql {

namespace {

sqlite3_file* mainFile(sqlite3* db)
{
    sqlite3_file* file = nullptr;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file) != SQLITE_OK || !file || !file->pMethods)
        return nullptr;
    return file;
}

/// The wal-index header's two copies at the start of the -shm file (SQLite's walformat.html:
/// 48 bytes each); zeroed, they make the next reader rebuild the index from the WAL itself.
constexpr int kWalIndexHeadersBytes = 96;
constexpr int kWalWriteLock = 0; ///< the shared-memory lock a WAL writer holds

} // namespace

SqliteFileGuard::SqliteFileGuard(sqlite3* db, std::string path)
    : m_db(db)
    , m_path(std::move(path))
{
    // Replaces SQLite's automatic checkpoint (at 1000 pages): ours runs after every commit, so
    // the WAL is empty between writes and a file copied over then has nothing to replay.
    sqlite3_wal_hook(m_db, &SqliteFileGuard::afterCommit, this);
}

bool SqliteFileGuard::arm(int64_t page, int64_t pageSize, const std::string& marker)
{
    m_page = page;
    m_pageSize = pageSize;
    m_marker = marker;
    if (page > 0 && pageSize > 0 && !marker.empty() && fileStillOurs())
        return true;
    m_marker.clear();
    return false;
}

bool SqliteFileGuard::checkFile()
{
    if (!m_replaced && !m_marker.empty() && !fileStillOurs())
        m_replaced = true;
    return !m_replaced;
}

std::string SqliteFileGuard::replacedMessage() const
{
    return "the preference store '" + m_path +
           "' was replaced while it was open (another file was copied over it); nothing more is written to it, "
           "and what this program wrote after the copy is not in it";
}

bool SqliteFileGuard::fileStillOurs() const
{
    sqlite3_file* file = mainFile(m_db);
    if (!file)
        return true; // nothing to read it through: no evidence against it
    std::vector<char> bytes(size_t(m_pageSize), 0);
    const int rc = file->pMethods->xRead(file, bytes.data(), int(m_pageSize), (m_page - 1) * m_pageSize);
    if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ) // a short read is a shorter file: zeros
        return true; // an I/O error is said by the statement that meets it, not taken for a copy
    const auto at = std::search(bytes.begin(), bytes.end(), m_marker.begin(), m_marker.end());
    return at != bytes.end();
}

void SqliteFileGuard::dropWal()
{
    sqlite3_file* file = mainFile(m_db);
    const bool shm = file && file->pMethods->iVersion >= 2;
    const bool locked =
        shm && file->pMethods->xShmLock(file, kWalWriteLock, 1, SQLITE_SHM_LOCK | SQLITE_SHM_EXCLUSIVE) == SQLITE_OK;
    sqlite3_file* wal = nullptr;
    if (sqlite3_file_control(m_db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal) == SQLITE_OK && wal && wal->pMethods) {
        wal->pMethods->xTruncate(wal, 0);
        wal->pMethods->xSync(wal, SQLITE_SYNC_NORMAL);
    }
    void volatile* index = nullptr;
    if (shm && file->pMethods->xShmMap(file, 0, 32 * 1024, 0, &index) == SQLITE_OK && index) {
        std::memset(const_cast<void*>(index), 0, kWalIndexHeadersBytes);
        file->pMethods->xShmBarrier(file);
    }
    if (locked)
        file->pMethods->xShmLock(file, kWalWriteLock, 1, SQLITE_SHM_UNLOCK | SQLITE_SHM_EXCLUSIVE);
}

void SqliteFileGuard::beforeClose()
{
    if (checkFile())
        return; // SQLite's own checkpoint on close writes our pages into our file
    dropWal();
    sqlite3_db_config(m_db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
}

int SqliteFileGuard::afterCommit(void* self, sqlite3* db, const char* schema, int frames)
{
    auto* guard = static_cast<SqliteFileGuard*>(self);
    if (frames <= 0 || std::strcmp(schema, "main") != 0)
        return SQLITE_OK;
    if (!guard->checkFile()) {
        // The commit is in a WAL that belongs to no file now: emptied, it reaches none, and the
        // statement reports an error (SqliteDatabase words it with replacedMessage).
        guard->dropWal();
        return SQLITE_IOERR;
    }
    // Without waiting: a reader of another connection holds the WAL's end back; the next commit
    // tries again (and SQLite restarts the WAL once every frame is in the file).
    sqlite3_busy_timeout(db, 0);
    sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr);
    sqlite3_busy_timeout(db, guard->m_busyTimeoutMs);
    return SQLITE_OK;
}

} // namespace d2dpo::sql
