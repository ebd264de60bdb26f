// SPDX-License-Identifier: GPL-3.0-or-later
// PreferenceStore on a PostgreSQL server: a team store. Opening one checks what the database
// holds, creates the schema with its roles and row security in an empty database (one
// transaction: PostgreSQL's DDL is transactional), upgrades an older one, and learns who is
// connected: on a team store the labeler is the database role, never a name typed in a box.
#include "store/preferencestore.h"

#include "store/postgresschema.h"
#include "store/sql/postgresdatabase.h"
#include "store/storeimpl.h"
#include "store/storeschema.h"
#include "store/storename.h"

namespace d2dpo {

namespace {

/// The version of the access rules the store was given (store_meta's access_version; 1 before it existed).
int accessVersion(sql::Database& db)
{
    const sql::Value value =
        db.execAndGet("SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'access_version'");
    return value.isNull() ? 1 : int(value.getInt64());
}

/// Gives the store this build's access rules and records their version, inside the caller's transaction.
void applyAccessRules(sql::Database& db)
{
    db.exec(postgresAccessScript());
    db.exec(postgresQueueScript());
    db.exec("INSERT INTO store_meta (key, value) VALUES ('access_version', '" + std::to_string(kPostgresAccessVersion) +
            "') ON CONFLICT (key) DO UPDATE SET value = excluded.value");
}

int storedVersion(sql::Database& db)
{
    return int(db.execAndGet("SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'schema_version'").getInt64());
}

} // namespace

std::string StoreImpl::displayName() const { return team() ? storeNameForMessages(path) : path; }

ErrorCode StoreImpl::errorCodeOf(const sql::Error& e)
{
    switch (e.kind()) {
    case sql::ErrorKind::Permission:
        return ErrorCode::Denied;
    case sql::ErrorKind::Connection:
        return ErrorCode::Unreachable;
    case sql::ErrorKind::ReadOnly:
        return ErrorCode::ReadOnly;
    default:
        return ErrorCode::Failed;
    }
}

bool PreferenceStore::isTeamStore() const { return m_own->team(); }
const std::string& PreferenceStore::teamIdentity() const { return m_own->identity; }
bool PreferenceStore::canMaintain() const { return m_own->maintainer; }

Result<std::unique_ptr<PreferenceStore>> PreferenceStore::openTeamStore(const std::string& url, OpenMode mode,
                                                                        std::shared_ptr<const WaitBreaker> breaker)
{
    const std::string where = "team store '" + storeNameForMessages(url) + "': ";
    try {
        auto server = std::make_unique<sql::PostgresDatabase>(url); // the connect itself hears no breaker
        server->setWaitBreaker(std::move(breaker));
        auto impl = std::make_unique<StoreImpl>(url, std::move(server));
        sql::Database& db = impl->db;
        const int latest = latestSchemaVersion();
        auto hasStore = [&] { return db.execAndGet("SELECT to_regclass('store_meta') IS NOT NULL").getInt() != 0; };
        if (!hasStore()) {
            const int64_t tables = db.execAndGet("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").getInt64();
            if (tables > 0)
                return makeError(where + "a database of another application (it has tables, but no d2dpo store); "
                                         "nothing was changed");
            if (mode == OpenMode::MustExist)
                return makeError(ErrorCode::NotFound, where + "no store in this database (create one with `d2dpo "
                                                              "store init URL`); nothing was changed");
            // One transaction, under the store's write lock: two clients creating it at once make one.
            sql::WriteTransaction transaction(db);
            if (!hasStore()) {
                db.exec(postgresSchema());
                applyAccessRules(db);
            }
            transaction.commit();
        }
        if (db.execAndGet("SELECT value FROM store_meta WHERE key = 'application'").getString() != "d2dpo-studio")
            return makeError(where + "its store_meta names another application; nothing was changed");
        int version = storedVersion(db);
        if (version > latest)
            return makeError(where + "written by a newer d2dpo-studio (schema " + std::to_string(version) +
                             ", this build knows up to " + std::to_string(latest) + "); nothing was changed");
        if (version < latest)
            try {
                // A session idle in a transaction that holds a table the migration alters, or the
                // store's write lock, holds the upgrade (and every client queued behind its locks)
                // 10 s at most, from the write lock on.
                db.exec("SET lock_timeout = '10s'");
                sql::WriteTransaction transaction(db);
                version = storedVersion(db);
                const auto& migrations = postgresMigrations();
                for (int v = version; v < latest; ++v) {
                    const size_t index = size_t(v - kPostgresBaseVersion);
                    if (v < kPostgresBaseVersion || index >= migrations.size())
                        throw sql::Error(sql::ErrorKind::Other,
                                         "no PostgreSQL migration from schema " + std::to_string(v));
                    db.exec(migrations[index]);
                }
                applyAccessRules(db);
                db.exec("UPDATE store_meta SET value = '" + std::to_string(latest) + "' WHERE key = 'schema_version'");
                transaction.commit();
                db.exec("RESET lock_timeout"); // the connection's own, as it opened
                version = latest;
            } catch (const sql::Error& e) {
                if (e.kind() == sql::ErrorKind::Busy)
                    return makeError(where + "upgrading it to schema " + std::to_string(latest) +
                                     " waited 10 s for a session that holds its tables (a transaction left open, "
                                     "as in psql: pg_stat_activity shows it); end it and try again; nothing was "
                                     "changed (" + std::string(e.what()) + ")");
                if (e.kind() != sql::ErrorKind::Permission)
                    throw;
                return makeError(ErrorCode::Denied,
                                 where + "the store is at schema " + std::to_string(version) +
                                     " and this build needs " + std::to_string(latest) +
                                     "; only its owner may upgrade it (`d2dpo store init URL` as the "
                                     "owner); nothing was changed");
            }
        impl->version = version;
        // Who logged in, not who they SET ROLE to: a labeler may switch to a group it is in, and
        // the store's functions (postgresaccess.cpp) know it by session_user as well.
        impl->identity = db.execAndGet("SELECT session_user").getString();
        const bool owner = db.execAndGet("SELECT (SELECT rolsuper FROM pg_roles WHERE rolname = session_user) OR "
                                         "(SELECT relowner FROM pg_class WHERE oid = 'store_meta'::regclass) = "
                                         "(SELECT oid FROM pg_roles WHERE rolname = session_user)")
                               .getInt() != 0;
        impl->maintainer =
            owner || db.execAndGet("SELECT pg_has_role(session_user, 'd2dpo_maintainer', 'MEMBER')").getInt() != 0;
        if (accessVersion(db) < kPostgresAccessVersion) {
            if (!owner)
                return makeError(ErrorCode::Denied,
                                 where + "its access rules are at version " + std::to_string(accessVersion(db)) +
                                     " and this build needs " + std::to_string(kPostgresAccessVersion) +
                                     "; only its owner may upgrade them (`d2dpo store init URL` as the owner); "
                                     "nothing was changed");
            try {
                // New rules lock the tables they change: a session idle in a transaction that read
                // them (a labeler's psql) would hold the upgrade, and every client behind it, forever.
                db.exec("SET lock_timeout = '10s'");
                sql::WriteTransaction transaction(db);
                applyAccessRules(db);
                transaction.commit();
                db.exec("RESET lock_timeout");
            } catch (const sql::Error& e) {
                if (e.kind() != sql::ErrorKind::Busy)
                    throw;
                return makeError(where + "upgrading its access rules waited 10 s for a session that holds its "
                                         "tables (a transaction left open, as in psql: pg_stat_activity shows it); "
                                         "end it and try again; nothing was changed (" + std::string(e.what()) + ")");
            }
        }
        std::unique_ptr<PreferenceStore> store(new PreferenceStore(std::move(impl)));
        // A team's runs are alive while their connections hold their locks (storeruns.cpp); a
        // labeler reads no runs.
        if (store->canMaintain())
            if (auto marked = store->markDeadRunsInterrupted(); !marked)
                return makeError(marked.errorCode(), where + marked.error());
        return store;
    } catch (const sql::Error& e) {
        return makeError(StoreImpl::errorCodeOf(e), where + e.what());
    }
}

} // namespace d2dpo
