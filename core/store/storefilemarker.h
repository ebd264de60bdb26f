// SPDX-License-Identifier: GPL-3.0-or-later
// An SQLite store's mark on its own file: a random marker in a table of one row that nothing
// writes again, so the page that holds it on disk shows whether the file is still this store
// (sql/sqlitefileguard.h: a file copied over an open store keeps its inode).
#pragma once

#include <cstdint>

namespace d2dpo {

namespace sql {
class SqliteDatabase;
}

/// Marks the file, when it has no mark yet or its mark was made for another file (a copy made
/// by `cp` carries its original's: it gets one of its own at its first open), and arms `sqlite`'s
/// guard with it. `device` and `inode` are the opened file's. Throws sql::Error.
void markAndGuardStoreFile(sql::SqliteDatabase& sqlite, uint64_t device, uint64_t inode);

} // namespace d2dpo
