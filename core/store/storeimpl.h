// SPDX-License-Identifier: GPL-3.0-or-later
// The store's private parts, shared by the files that implement PreferenceStore (open and
// integrity in preferencestore.cpp; models, labels and runs in their own files): the database
// connection (either engine) with its error guard, and the small column helpers. Not for use outside store/.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "store/sql/sqldatabase.h"

#include "store/preferencestore.h"

namespace d2dpo {

inline std::string nullableText(const sql::Value& column)
{
    return column.isNull() ? std::string() : column.getString();
}

inline void bindOptionalText(sql::Statement& statement, int index, const std::string& text)
{
    if (text.empty())
        statement.bindNullText(index); // a text NULL, so `? IS NULL` has a type on PostgreSQL too
    else
        statement.bind(index, text);
}

/// The store's overlap (different labelers per pair), as an SQL expression.
constexpr const char* kOverlapSql = "coalesce((SELECT CAST(value AS INTEGER) FROM settings WHERE key = 'overlap'), 1)";
/// The active labels on the pair `p`, as an SQL expression: counted through a view, as a team
/// store's labeler reads no one else's labels.
constexpr const char* kActiveLabelsSql = "coalesce((SELECT t.active FROM label_tally t WHERE t.pair_id = p.id), 0)";

/// A pair's columns as shown, 0..6 (id, left, right, left model, right model, task, blind), from
/// `pairs p` and its sequences `ls` and `rs`. A blind comparison's models are never read back, so
/// no view can show them; a team store's labeler reads no model at all (`withModels` false): it
/// sees sequences, not who made them, and the server would refuse it the column.
inline std::string pairColumnsSql(bool withModels, bool withModelsFromElsewhere = false)
{
    if (withModels && withModelsFromElsewhere) // what an export writes: an imported sequence's id from elsewhere too
        return "p.id, ls.tokens, rs.tokens, CASE WHEN p.purpose = 'compare' THEN NULL ELSE coalesce(ls.model_id, "
               "ls.made_by) END, CASE WHEN p.purpose = 'compare' THEN NULL ELSE coalesce(rs.model_id, rs.made_by) END, "
               "ls.task, p.purpose = 'compare'";
    return withModels ? "p.id, ls.tokens, rs.tokens, CASE WHEN p.purpose = 'compare' THEN NULL ELSE ls.model_id END, "
                        "CASE WHEN p.purpose = 'compare' THEN NULL ELSE rs.model_id END, ls.task, p.purpose = 'compare'"
                      : "p.id, ls.tokens, rs.tokens, CAST(NULL AS TEXT), CAST(NULL AS TEXT), ls.task, "
                        "p.comparison_id IS NOT NULL"; // a labeler reads no purpose (postgresqueue.cpp)
}

/// SELECT pairColumnsSql FROM the pairs with their sequences; a WHERE clause may follow.
inline std::string pairSelectSql(bool withModels)
{
    return "SELECT " + pairColumnsSql(withModels) +
           " FROM pairs p JOIN sequences ls ON ls.id = p.left_id JOIN sequences rs ON rs.id = p.right_id";
}

inline ShownPair readPair(sql::Statement& q)
{
    return {q.getColumn(0).getInt64(), q.getColumn(1).getString(), q.getColumn(2).getString(),
            nullableText(q.getColumn(3)), nullableText(q.getColumn(4)), q.getColumn(5).getString(),
            q.getColumn(6).getInt() != 0};
}

/// What insertPairs records beside the pairs themselves.
struct PairExtras {
    std::string purpose = "train";          ///< the pairs.purpose column
    std::vector<std::string> goldAnswers;   ///< gold: one "left"/"right" per pair
    std::optional<int64_t> comparisonId;
};

/// Inserts the pairs' sequences and the pairs, inside the caller's transaction; returns their ids.
std::vector<int64_t> insertPairs(sql::Database& db, const std::vector<ShownPair>& pairs, const std::string& source,
                                 const PairExtras& extras = {});

/// Why `pairs` cannot be stored (two identical sequences, no task), or "".
std::string pairsProblem(const std::vector<ShownPair>& pairs);

/// Why `labeler` cannot name a labeler, or "": a name is printed in lists, logs and model cards,
/// so it is a line of at most 200 bytes without control characters.
inline std::string labelerNameProblem(const std::string& labeler)
{
    if (labeler.empty())
        return "a label needs the labeler's name";
    if (labeler.size() > 200)
        return "a labeler's name may be at most 200 bytes long (this one is " + std::to_string(labeler.size()) + ")";
    for (unsigned char c : labeler)
        if (c < 0x20 || c == 0x7f)
            return "a labeler's name may not hold control characters such as a line break or a tab";
    return {};
}

using sql::WriteTransaction;

struct StoreImpl {
    std::string path; ///< the file, or the PostgreSQL URL as given
    std::unique_ptr<sql::Database> connection;
    sql::Database& db;
    int version = 0;
    uint64_t device = 0; ///< the opened file's device and inode (stillAtItsPath); SQLite only
    uint64_t inode = 0;
    std::string identity;  ///< a team store's role (current_user); empty on SQLite
    bool maintainer = true; ///< may generate pairs, train and manage models
    std::set<int64_t> liveRuns; ///< a team store's runs started here and not finished: their locks are held

    StoreImpl(std::string p, std::unique_ptr<sql::Database> c)
        : path(std::move(p))
        , connection(std::move(c))
        , db(*connection)
    {
    }

    bool team() const { return db.engine() == sql::Engine::PostgreSQL; }
    /// A team store's labeler: labels, undoes and holds pairs only through the store's functions
    /// (postgresaccess.cpp), as itself, and reads no model ids.
    bool labelerOnly() const { return team() && !maintainer; }
    /// Why a team store's labeler cannot act for `labeler` (someone else), or "".
    std::string actingForOthersProblem(const std::string& labeler) const
    {
        if (!labelerOnly() || labeler == identity)
            return {};
        return "on a team store " + identity + " labels only as " + identity + " (the database role), not as " + labeler;
    }

    /// Why a team store's labeler may not read `what` (everyone's labels with the models behind
    /// them: a maintainer's), or "".
    std::string maintainersOnlyProblem(const std::string& what) const
    {
        if (!labelerOnly())
            return {};
        return what + " is for the team's maintainers: " + identity +
               " labels on this team store, and a labeler reads only its own labels, not the models behind the pairs";
    }

    /// Runs `body` and turns the engine's exceptions into a user-facing error.
    template <typename T, typename F>
    Result<T> guard(const std::string& what, F&& body)
    {
        try {
            return body();
        } catch (const sql::Error& e) {
            return makeError(errorCodeOf(e), what + " failed in '" + displayName() + "': " + e.what());
        }
    }

    /// The store as messages name it: a URL without its password.
    std::string displayName() const;
    static ErrorCode errorCodeOf(const sql::Error& e);
};

/// The pending pairs as PreferenceStore::pendingPairs describes them, as a maintainer reads them (a
/// labeler's queue is the server's, postgresqueue.cpp); with `heedLeases`, without the pairs others'
/// unexpired leases fill to the overlap and without those `labeler` holds itself.
std::vector<ShownPair> readPending(sql::Database& db, const QueueSettings& settings, int64_t limit,
                                  const std::string& task, const std::string& labeler, bool heedLeases);

/// The pairs the server's queue function `call` (postgresqueue.cpp) names, in its order, as a team
/// store's labeler reads them: `call` is a SELECT of one bigint column, its parameters bound by `bind`.
std::vector<ShownPair> serverQueuePairs(sql::Database& db, const std::string& call,
                                        const std::function<void(sql::Statement&)>& bind);

/// Seconds since the epoch by the database's clock (one clock for every client of a team store).
inline const char* nowSecondsSql(const sql::Database& db)
{
    return db.engine() == sql::Engine::PostgreSQL ? "CAST(extract(epoch FROM now()) AS BIGINT)"
                                                  : "CAST(strftime('%s', 'now') AS INTEGER)";
}

/// A unique index refused the row (SQLite's SQLITE_CONSTRAINT_UNIQUE, PostgreSQL's 23505).
inline bool isUniqueViolation(const sql::Error& e)
{
    return e.kind() == sql::ErrorKind::Constraint && (e.code() == "2067" || e.code() == "23505");
}

/// Inserts with `RETURNING id` and reads the new row's id (both engines speak it).
inline int64_t insertReturningId(sql::Statement& insert)
{
    if (!insert.executeStep())
        throw sql::Error(sql::ErrorKind::Other, "the insert returned no id");
    const int64_t id = insert.getColumn(0).getInt64();
    insert.exec(); // to its end, so the statement is done before the next one
    return id;
}

} // namespace d2dpo
