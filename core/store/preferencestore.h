// SPDX-License-Identifier: GPL-3.0-or-later
// The preference store, on an SQLite file or a team's PostgreSQL server (store/sql/): opened here,
// and used through its facets, one header each: the models (store/modelcatalog.h), the pairs, the
// queue and the labels (store/labelqueue.h), the training runs (store/runlog.h), the blind
// comparisons (store/comparisonbook.h), the imports (store/importlog.h) and the measurements
// (store/assaybook.h). A caller that needs
// one facet takes it (a RunLog&, say); PreferenceStore is all of them on one connection. Its
// records are in store/records.h. Foreign keys (and WAL on SQLite), a schema version with forward
// migrations; every label is committed the moment it is made. No torch and no Qt here.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "store/assaybook.h"
#include "store/comparisonbook.h"
#include "store/importlog.h"
#include "store/labelqueue.h"
#include "store/modelcatalog.h"
#include "store/records.h"
#include "store/runlog.h"

namespace d2dpo {

class WaitBreaker;

namespace detail {
/// Owns the connection the facets share: a base listed before them, so it is made before them and
/// closed after them.
class StoreOwner {
protected:
    explicit StoreOwner(std::unique_ptr<StoreImpl> impl);
    ~StoreOwner();
    std::unique_ptr<StoreImpl> m_own;
};
} // namespace detail

class PreferenceStore final : private detail::StoreOwner,
                              public ModelCatalog,
                              public LabelQueue,
                              public RunLog,
                              public ComparisonBook,
                              public ImportLog,
                              public AssayBook {
public:
    enum class OpenMode {
        CreateIfMissing, ///< a new store file (not its folder) is created; the default path's folder too
        MustExist,       ///< for commands that only read, or change what is there: nothing is created
    };
    /// Opens (or creates) the store at `path`: an SQLite file, or a team store on a PostgreSQL
    /// server when it is a URL (postgresql://..., libpq's conventions: ~/.pgpass, PGSERVICE,
    /// sslmode); a team store's schema, roles and row security are made by the first open of an
    /// empty database by a role that may create them (`d2dpo store init URL`). Refuses, without changing the file, one that is
    /// not a database, is corrupt, comes from a newer schema, or cannot be written. Runs left
    /// "running" by a process that died (its run lock is free) are marked "interrupted".
    /// Once `breaker` (if any) is tripped, from any thread, a team store's statement waiting on
    /// its server fails at once as a lost connection, and none connects again: a closing window's
    /// worker ends now, not at the answer limit. Heard from the open's first statement on; nothing
    /// changes on an SQLite store.
    static Result<std::unique_ptr<PreferenceStore>> open(const std::string& path,
                                                         OpenMode mode = OpenMode::CreateIfMissing,
                                                         std::shared_ptr<const WaitBreaker> breaker = nullptr);
    /// $XDG_DATA_HOME/d2dpo-studio/preferences.sqlite, else ~/.local/share/d2dpo-studio/...
    static std::string defaultPath();

    ~PreferenceStore();
    PreferenceStore(const PreferenceStore&) = delete;
    PreferenceStore& operator=(const PreferenceStore&) = delete;
    const std::string& path() const;
    /// The store as messages name it: the file, or the URL without its password.
    std::string displayName() const;
    /// A PostgreSQL store shared by a team (rather than one SQLite file).
    bool isTeamStore() const;
    /// A team store's labeler: the role that logged in (session_user); "" on an SQLite store.
    const std::string& teamIdentity() const;
    /// Whether this connection may generate pairs, train and manage models: always on an SQLite
    /// store; on a team store, a role in d2dpo_maintainer (or the store's owner).
    bool canMaintain() const;
    int schemaVersion() const;
    /// The latest schema this build writes and reads.
    static int latestSchemaVersion();
    /// Ok while the file this store opened is still the one at its path; an error when it was
    /// deleted or replaced since (writes would go nowhere a later open could see).
    Status stillAtItsPath() const;

    /// Copies every record of `from` (models with lineage, tasks, evaluations, sequences, pairs, labels
    /// with history, imports, comparisons, runs with series, queue settings, assays with their measurements; not leases) into `to`,
    /// which must hold none yet: one transaction, ids kept, each table's count checked against the
    /// source before it commits. Returns each table's name and count, in the order copied.
    static Result<std::vector<std::pair<std::string, int64_t>>> copyAll(PreferenceStore& from, PreferenceStore& to);

    /// PRAGMA integrity_check: "ok" or SQLite's report.
    Result<std::string> integrityCheck();

private:
    static Result<std::unique_ptr<PreferenceStore>> openTeamStore(const std::string& url, OpenMode mode,
                                                                  std::shared_ptr<const WaitBreaker> breaker);
    explicit PreferenceStore(std::unique_ptr<StoreImpl> impl);
};

} // namespace d2dpo
