// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/storefilemarker.h"

#include <string>

#include "store/sql/sqlitedatabase.h"

namespace d2dpo {

void markAndGuardStoreFile(sql::SqliteDatabase& sqlite, uint64_t device, uint64_t inode)
{
    sql::Database& db = sqlite;
    // Not a schema version of its own: the mark belongs to the file, not to the store's contents
    // (a team store, or a copy made by `d2dpo store copy`, has none), and an older build leaves it be.
    const std::string file = std::to_string(device) + ":" + std::to_string(inode);
    const auto marked = [&] {
        if (db.execAndGet("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'store_file'").getInt() == 0)
            return false;
        sql::Statement same(db, "SELECT count(*) FROM store_file WHERE file = ?");
        same.bind(1, file);
        return same.executeStep() && same.getColumn(0).getInt() == 1;
    };
    if (!marked()) {
        // Marking writes, and its commit checkpoints. With another connection's pages in the WAL
        // they may be another file's (this one copied over theirs while they had it open): then
        // nothing goes into the file from here, neither the mark nor their pages; a later open marks it.
        if (sqlite.walHoldsPages()) {
            sqlite.neverCheckpoint();
            return;
        }
        sql::WriteTransaction transaction(db);
        if (!marked()) { // another process may have marked it meanwhile
            db.exec("CREATE TABLE IF NOT EXISTS store_file (marker TEXT NOT NULL, file TEXT NOT NULL)");
            db.exec("DELETE FROM store_file");
            sql::Statement mark(db, "INSERT INTO store_file (marker, file) VALUES "
                                    "('d2dpo store file ' || lower(hex(randomblob(16))), ?)");
            mark.bind(1, file);
            mark.exec();
        }
        transaction.commit(); // checkpointed at once (the guard's commit hook): the page is on disk
    }
    const int64_t page =
        db.execAndGet("SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = 'store_file'").getInt64();
    const int64_t pageSize = db.execAndGet("PRAGMA page_size").getInt64();
    const std::string marker = db.execAndGet("SELECT marker FROM store_file").getString();
    // Not armed yet when a reader of another process held the mark's checkpoint back: the guard
    // arms after the next checkpoint that completes, rather than take the unwritten page for
    // another file's.
    sqlite.guardFile(page, pageSize, marker);
}

} // namespace d2dpo
