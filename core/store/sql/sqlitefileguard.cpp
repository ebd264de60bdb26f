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
/// The -shm locks (os_unix.c, wal.c): WAL_WRITE_LOCK and WAL_CKPT_LOCK at 0 and 1, the readers'
/// WAL_READ_LOCK(1..4) at 4..7 (WAL_READ_LOCK(0), at 3, reads the file alone, never the WAL).
constexpr int kWriteAndCheckpointLocks = 0;
constexpr int kWalReaderLocks = 4;

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
    m_marker = page > 0 && pageSize > 0 ? marker : std::string();
    m_armed = !m_marker.empty() && fileStillOurs();
    return m_armed;
}

void SqliteFileGuard::neverCheckpoint()
{
    m_checkpoints = false;
    sqlite3_db_config(m_db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
}

bool SqliteFileGuard::checkFile()
{
    if (!m_replaced && m_armed && !fileStillOurs())
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
    return std::search(bytes.begin(), bytes.end(), m_marker.begin(), m_marker.end()) != bytes.end();
}

bool SqliteFileGuard::dropWal()
{
    // As SQLite itself restarts a WAL: with the writer's, the checkpointer's and every WAL reader's
    // lock held, so that no connection is writing frames to it or reading frames from it meanwhile.
    // Busy (another connection mid-transaction), it is left for the next commit or the close.
    sqlite3_file* file = mainFile(m_db);
    if (!file || file->pMethods->iVersion < 2)
        return false;
    const auto& io = *file->pMethods;
    constexpr int exclusive = SQLITE_SHM_EXCLUSIVE;
    if (io.xShmLock(file, kWriteAndCheckpointLocks, 2, SQLITE_SHM_LOCK | exclusive) != SQLITE_OK)
        return false;
    const bool readersOut = io.xShmLock(file, kWalReaderLocks, 4, SQLITE_SHM_LOCK | exclusive) == SQLITE_OK;
    if (readersOut) {
        sqlite3_file* wal = nullptr;
        if (sqlite3_file_control(m_db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal) == SQLITE_OK && wal && wal->pMethods) {
            wal->pMethods->xTruncate(wal, 0);
            wal->pMethods->xSync(wal, SQLITE_SYNC_NORMAL);
        }
        void volatile* index = nullptr;
        if (io.xShmMap(file, 0, 32 * 1024, 0, &index) == SQLITE_OK && index) {
            std::memset(const_cast<void*>(index), 0, kWalIndexHeadersBytes);
            io.xShmBarrier(file);
        }
        io.xShmLock(file, kWalReaderLocks, 4, SQLITE_SHM_UNLOCK | exclusive);
    }
    io.xShmLock(file, kWriteAndCheckpointLocks, 2, SQLITE_SHM_UNLOCK | exclusive);
    return readersOut;
}

void SqliteFileGuard::beforeClose()
{
    // No callback may reach this guard once it is gone (a statement left unfinalised would keep
    // the connection alive past its close).
    sqlite3_wal_hook(m_db, nullptr, nullptr);
    if (checkFile())
        return; // SQLite's own checkpoint on close writes our pages into our file
    sqlite3_db_config(m_db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
    dropWal();
}

int SqliteFileGuard::afterCommit(void* self, sqlite3* db, const char* schema, int frames)
{
    auto* guard = static_cast<SqliteFileGuard*>(self);
    if (frames <= 0 || std::strcmp(schema, "main") != 0)
        return SQLITE_OK;
    if (!guard->checkFile()) {
        // The commit is in a WAL that belongs to no file now: emptied, it reaches none, and the
        // statement reports an error (SqliteDatabase words it with replacedMessage).
        sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
        guard->dropWal();
        return SQLITE_IOERR;
    }
    if (!guard->m_checkpoints)
        return SQLITE_OK;
    // Without waiting: a reader of another connection holds the WAL's end back (SQLITE_BUSY), or a
    // statement of this one is still open (SQLITE_LOCKED); the next commit tries again, and SQLite
    // restarts the WAL once every frame is in the file.
    sqlite3_busy_timeout(db, 0);
    const int rc = sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr);
    sqlite3_busy_timeout(db, guard->m_busyTimeoutMs);
    if (rc == SQLITE_OK && !guard->m_armed && !guard->m_marker.empty())
        guard->m_armed = guard->fileStillOurs(); // the mark is on disk now
    return SQLITE_OK;
}

} // namespace d2dpo::sql
