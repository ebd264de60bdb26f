// SPDX-License-Identifier: GPL-3.0-or-later
#include "store/preferencestore.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <pwd.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "store/sql/postgresdatabase.h"
#include "store/sql/sqlitedatabase.h"

#include "base/timeutil.h"
#include "store/storefilemarker.h"
#include "store/storeimpl.h"
#include "store/storename.h"
#include "store/storeschema.h"

namespace d2dpo {

namespace fs = std::filesystem;

namespace {

constexpr int kApplicationId = 0x44324450; // "D2DP": marks the file as a d2dpo-studio store

bool isBusy(const sql::Error& e) { return e.kind() == sql::ErrorKind::Busy; }

/// What stops a store file from being opened or made at `path` before SQLite is asked: a path too
/// long for SQLite, something not a file, a read-only file, a store that must exist and does not,
/// a missing folder. Only the default store's folder is made.
Status checkStorePath(const std::string& path, PreferenceStore::OpenMode mode, const std::string& where)
{
    std::error_code ec;
    // SQLite's file layer opens names of at most 512 bytes, its journals' (-journal, -wal) too,
    // and says only "unable to open database file" past that: measured, 504 is the longest store.
    constexpr size_t kLongestPath = 504;
    if (const std::string full = fs::weakly_canonical(fs::absolute(path, ec), ec).string(); full.size() > kLongestPath)
        return makeError(where + "its full path is " + std::to_string(full.size()) +
                         " characters long, and SQLite opens stores of at most " + std::to_string(kLongestPath) +
                         ": move it (or name it) under a shorter path; nothing was opened or created");
    const bool existed = fs::exists(path, ec);
    if (existed && !fs::is_regular_file(path, ec))
        return makeError(where + "not a regular file");
    // The file's own mode counts even for root (who may write anything): a store marked
    // read-only is treated as read-only.
    const bool ownerWritable =
        !existed || (fs::status(path, ec).permissions() & fs::perms::owner_write) != fs::perms::none;
    if (existed && (!ownerWritable || access(path.c_str(), W_OK) != 0))
        return makeError(ErrorCode::ReadOnly, where + "the file is read-only; nothing was changed (fix its "
                                                      "permissions or choose another store with --db)");
    if (!existed && mode == PreferenceStore::OpenMode::MustExist)
        return makeError(ErrorCode::NotFound, where + "no such store (this command creates none; label pairs in the "
                                                      "application or with `d2dpo pairs` first)");
    if (!existed) {
        // Only the default store's folder is made: a mistyped --db folder is an error, not a new tree.
        const fs::path parent = fs::path(path).parent_path();
        if (!parent.empty() && path == PreferenceStore::defaultPath())
            fs::create_directories(parent, ec);
        if (ec)
            return makeError(where + "cannot create its folder: " + ec.message());
        if (!parent.empty() && !fs::is_directory(parent, ec))
            return makeError(where + "the folder '" + parent.string() + "' does not exist");
    }
    return Ok{};
}

/// The read-only checks of a file SQLite opened, before anything is written to it: an SQLite
/// database of this application, of a schema this build knows, not corrupt, writable. Its schema
/// version, or why it is refused; a busy file throws (the caller tries again).
Result<int> checkOpenedFile(sql::SqliteDatabase& sqlite, sql::Database& db, PreferenceStore::OpenMode mode,
                            const std::string& where)
{
    int version = 0;
    int applicationId = 0;
    int tables = 0;
    try {
        // One read transaction: a store another process is making right now is seen whole or not
        // at all. Read apart, its tables could show up after its (still zero) application id was
        // read, and the file would be refused as another application's.
        db.exec("BEGIN");
        version = db.execAndGet("PRAGMA user_version").getInt();
        applicationId = db.execAndGet("PRAGMA application_id").getInt();
        tables = db.execAndGet("SELECT count(*) FROM sqlite_master").getInt();
        db.exec("COMMIT");
    } catch (const sql::Error& e) {
        try {
            db.exec("ROLLBACK");
        } catch (const sql::Error&) { // none was open, or the file is not a database: the first error counts
        }
        if (isBusy(e))
            throw;
        if (e.kind() == sql::ErrorKind::NotADatabase)
            return makeError(where + "not an SQLite database (" + e.what() + "); nothing was changed");
        return makeError(where + "cannot read it (" + e.what() +
                         "; a full disk or a failing device?); nothing was changed");
    }
    if (applicationId != kApplicationId && (applicationId != 0 || tables > 0))
        return makeError(where + "an SQLite database of another application; nothing was changed");
    // A command that only reads (or changes what is there) never makes a store, not even in an
    // empty file it was given by mistake.
    if (mode == PreferenceStore::OpenMode::MustExist && tables == 0)
        return makeError(where + "an empty file, not a preference store; nothing was changed");
    if (version > PreferenceStore::latestSchemaVersion())
        return makeError(where + "written by a newer d2dpo-studio (schema " + std::to_string(version) +
                         ", this build knows up to " + std::to_string(PreferenceStore::latestSchemaVersion()) +
                         "); nothing was changed");
    if (tables > 0) {
        const std::string check = db.execAndGet("PRAGMA quick_check").getString();
        if (check != "ok")
            return makeError(where + "the database is corrupt (" + check.substr(0, 200) +
                             "); nothing was changed. Restore a backup or start a new store with --db");
    }
    if (sqlite.isReadOnly())
        return makeError(ErrorCode::ReadOnly, where + "opened read-only; nothing was changed");
    return version;
}

/// Brings the schema from `version` to the latest, in one write transaction with the version read
/// again inside it: a second process opening the same old store waits, then finds it upgraded.
void upgradeSchema(sql::Database& db, int version)
{
    const auto& migrations = storeMigrations();
    if (version < int(migrations.size())) {
        db.exec("BEGIN IMMEDIATE");
        try {
            version = db.execAndGet("PRAGMA user_version").getInt();
            for (int v = version; v < int(migrations.size()); ++v) {
                db.exec(migrations[size_t(v)]);
                db.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
                db.exec("PRAGMA user_version = " + std::to_string(v + 1));
                // Migrations run with foreign keys off (a rebuilt table is dropped and renamed,
                // as SQLite's documentation prescribes); none may leave a dangling reference.
                if (db.execAndGet("SELECT count(*) FROM pragma_foreign_key_check").getInt() != 0)
                    throw sql::Error(sql::ErrorKind::Other,
                                     "the upgrade to schema " + std::to_string(v + 1) +
                                         " would leave dangling references; nothing was changed");
            }
            db.exec("COMMIT");
        } catch (const sql::Error&) {
            try {
                db.exec("ROLLBACK");
            } catch (const sql::Error&) { // the first error is the one to report
            }
            throw;
        }
    }
}

} // namespace

namespace detail {
StoreOwner::StoreOwner(std::unique_ptr<StoreImpl> impl)
    : m_own(std::move(impl))
{
}
StoreOwner::~StoreOwner() = default;
} // namespace detail

PreferenceStore::PreferenceStore(std::unique_ptr<StoreImpl> impl)
    : StoreOwner(std::move(impl))
    , ModelCatalog(*m_own)
    , LabelQueue(*m_own)
    , RunLog(*m_own)
    , ComparisonBook(*m_own)
    , ImportLog(*m_own)
    , AssayBook(*m_own)
{
}
PreferenceStore::~PreferenceStore()
{
    // A store moved over or removed while open keeps its WAL under the path's name, and SQLite
    // leaves it there on close: the next file opened at that path would replay the old store's
    // pages into itself. Checkpointed into the old file and truncated first, the WAL left behind
    // is empty, and nothing replays an empty WAL. (A file copied over in place keeps its inode:
    // sql/sqlitefileguard.h sees that one.)
    if (m_own && !m_own->team() && !stillAtItsPath()) {
        try {
            m_own->db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        } catch (const sql::Error&) {
            // Closing goes on: nothing more can be done for a file no longer at its path.
        }
    }
}

const std::string& PreferenceStore::path() const { return m_own->path; }
std::string PreferenceStore::displayName() const { return m_own->displayName(); }
int PreferenceStore::schemaVersion() const { return m_own->version; }

int PreferenceStore::latestSchemaVersion() { return int(storeMigrations().size()); }

Status PreferenceStore::stillAtItsPath() const
{
    if (m_own->team())
        return Ok{}; // a server's database has no path to be replaced at
    struct stat now {};
    if (::stat(m_own->path.c_str(), &now) != 0)
        return makeError("the preference store '" + m_own->path + "' was removed while it was open");
    if (now.st_dev != m_own->device || now.st_ino != m_own->inode)
        return makeError("the preference store '" + m_own->path + "' was replaced by another file while it was open");
    if (auto* sqlite = dynamic_cast<sql::SqliteDatabase*>(&m_own->db); sqlite && !sqlite->fileStillOurs())
        return makeError(sqlite->guard().replacedMessage());
    return Ok{};
}

std::string PreferenceStore::defaultPath()
{
    fs::path base;
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
        base = xdg;
    else if (const char* home = std::getenv("HOME"); home && *home)
        base = fs::path(home) / ".local" / "share";
    else if (const passwd* user = ::getpwuid(::getuid()); user && user->pw_dir && *user->pw_dir)
        base = fs::path(user->pw_dir) / ".local" / "share"; // HOME unset: the account's own home
    else
        return {}; // no home at all: a store must be named (never one in whatever folder this runs in)
    return (base / "d2dpo-studio" / "preferences.sqlite").string();
}

Result<std::unique_ptr<PreferenceStore>> PreferenceStore::open(const std::string& path, OpenMode mode,
                                                               std::shared_ptr<const WaitBreaker> breaker)
{
    if (sql::isPostgresUrl(path))
        return openTeamStore(path, mode, std::move(breaker));
    if (path.empty())
        return makeError("no preference store was named (and there is no home folder for the default one): "
                         "name one with --db");
    const std::string where = "preference store '" + storeNameForMessages(path) + "': ";
    if (looksLikeConnectionString(path))
        return makeError(where + "this is a PostgreSQL key=value connection string; a team store is named by a URL, "
                                 "postgresql://USER@HOST/DATABASE (keep its password in ~/.pgpass, not on a "
                                 "command line); nothing was created");
    if (Status s = checkStorePath(path, mode, where); !s)
        return makeError(s.errorCode(), s.error());
    std::unique_ptr<StoreImpl> impl;
    // Two processes opening one new store at the same moment can meet a lock SQLite reports at
    // once instead of waiting out the busy timeout (the switch to WAL, a read during the other's
    // first write); every step below is read-only or one transaction, so the open is tried again.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
        try {
            auto file = std::make_unique<sql::SqliteDatabase>(path);
            sql::SqliteDatabase& sqlite = *file;
            impl = std::make_unique<StoreImpl>(path, std::move(file));
            sql::Database& db = impl->db;
            sqlite.setBusyTimeout(5000);
            if (struct stat opened {}; ::stat(path.c_str(), &opened) == 0) { // the file as opened (stillAtItsPath)
                impl->device = opened.st_dev;
                impl->inode = opened.st_ino;
            }
            // Read-only checks first: nothing is written to a file we are going to refuse.
            const Result<int> version = checkOpenedFile(sqlite, db, mode, where);
            if (!version)
                return makeError(version.errorCode(), version.error());
            db.exec("PRAGMA journal_mode = WAL");
            // Each label is one transaction; FULL makes it durable past a crash of the machine too,
            // not only of the application.
            db.exec("PRAGMA synchronous = FULL");
            upgradeSchema(db, version.value());
            db.exec("PRAGMA foreign_keys = ON");
            markAndGuardStoreFile(sqlite, impl->device, impl->inode);
            impl->version = db.execAndGet("PRAGMA user_version").getInt();
            break;
        } catch (const sql::Error& e) {
            if (isBusy(e) && std::chrono::steady_clock::now() < deadline) {
                impl.reset();
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                continue;
            }
            if (e.kind() == sql::ErrorKind::ReadOnly)
                return makeError(ErrorCode::ReadOnly,
                                 where + "cannot write to it (read-only file or folder); nothing was changed");
            return makeError(where + "cannot open it: " + e.what());
        }
    }
    std::unique_ptr<PreferenceStore> store(new PreferenceStore(std::move(impl)));
    if (auto marked = store->markDeadRunsInterrupted(); !marked)
        return makeError(where + marked.error());
    return store;
}

Result<std::string> PreferenceStore::integrityCheck()
{
    return m_own->guard<std::string>("checking integrity", [&] {
        if (m_own->team()) // the server keeps its own pages whole; what can be checked from here is the schema
            return m_own->db
                .execAndGet("SELECT CASE WHEN value = '" + std::to_string(m_own->version) +
                            "' THEN 'ok' ELSE 'schema version ' || value END FROM store_meta "
                            "WHERE key = 'schema_version'")
                .getString();
        return m_own->db.execAndGet("PRAGMA integrity_check").getString();
    });
}

} // namespace d2dpo
