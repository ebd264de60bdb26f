// SPDX-License-Identifier: GPL-3.0-or-later
// A store file copied over while it is open (`cp other.sqlite store.sqlite`) keeps its inode, so
// nothing in the file system tells the open connection; its WAL still holds the old store's pages,
// and a checkpoint (ours, or the next opener's after replaying that WAL) would write them into the
// new file and corrupt it. The guard keeps the WAL empty between writes and checks, before any of
// our pages go into the file, that the file on disk is still ours: one page of it, never written
// after the store marks it, must still hold the store's random marker.
// Not seen: a copy of this very file (same marker) put back over it, and a copy landing between
// the check and the checkpoint that follows it (microseconds).
#pragma once

#include <cstdint>
#include <string>

struct sqlite3;

namespace d2dpo::sql {

class SqliteFileGuard {
public:
    /// Watches `db` (the file at `path`): from now on each commit is checkpointed into the file
    /// and the WAL truncated, without waiting on other connections' readers. (The hook replaces
    /// SQLite's automatic checkpoint: nothing may set `wal_autocheckpoint` on this connection.)
    SqliteFileGuard(sqlite3* db, std::string path);

    /// Arms the file check: page `page` (of `pageSize` bytes) holds `marker` on disk. False when
    /// it does not hold it yet (its checkpoint was held up by a reader): arming is tried again
    /// after each checkpoint that completes.
    bool arm(int64_t page, int64_t pageSize, const std::string& marker);

    /// Never checkpoints from this connection, closing included: for a connection that found
    /// another connection's pages in the WAL of a file it cannot tell is theirs.
    void neverCheckpoint();

    /// Reads the marker's page from the file on disk: false, from then on, once it is another
    /// file. Checked after every commit, before its pages go into the file, and before closing.
    bool checkFile();

    /// True once checkFile found another file: every later statement is refused.
    bool replaced() const { return m_replaced; }

    /// The sentence that says so.
    std::string replacedMessage() const;

    /// What to do before the connection closes: when the file was replaced, our WAL is emptied
    /// and the close told not to checkpoint, so nothing of the old store reaches the new file.
    void beforeClose();

    /// The connection's busy timeout, restored after each checkpoint that is tried without waiting
    /// (set it through SqliteDatabase::setBusyTimeout, never with the pragma).
    void setBusyTimeout(int milliseconds) { m_busyTimeoutMs = milliseconds; }

private:
    static int afterCommit(void* self, sqlite3* db, const char* schema, int frames);
    bool fileStillOurs() const;
    bool dropWal();

    sqlite3* m_db;
    std::string m_path;
    int64_t m_page = 0;
    int64_t m_pageSize = 0;
    std::string m_marker; ///< empty: nothing to check yet
    bool m_armed = false;
    bool m_replaced = false;
    bool m_checkpoints = true;
    int m_busyTimeoutMs = 0;
};

} // namespace d2dpo::sql
