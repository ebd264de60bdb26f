// SPDX-License-Identifier: GPL-3.0-or-later
// The store's private parts, shared by the files that implement PreferenceStore (open and
// integrity in preferencestore.cpp; models, labels and runs in their own files): the SQLite
// handle with its error guard, and the small column helpers. Not for use outside store/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <SQLiteCpp/SQLiteCpp.h>

#include "store/preferencestore.h"

namespace d2dpo {

inline std::string nullableText(const SQLite::Column& column)
{
    return column.isNull() ? std::string() : column.getString();
}

inline void bindOptionalText(SQLite::Statement& statement, int index, const std::string& text)
{
    if (text.empty())
        statement.bind(index); // NULL
    else
        statement.bind(index, text);
}

/// A pair as shown, columns 0..6 (id, left, right, left model, right model, task, blind); a blind
/// comparison's models are not read back, so no view can show them.
constexpr const char* kPairSelect = R"sql(
    SELECT p.id, ls.tokens, rs.tokens, CASE WHEN p.purpose = 'compare' THEN NULL ELSE ls.model_id END,
           CASE WHEN p.purpose = 'compare' THEN NULL ELSE rs.model_id END, ls.task, p.purpose = 'compare'
    FROM pairs p JOIN sequences ls ON ls.id = p.left_id JOIN sequences rs ON rs.id = p.right_id)sql";

inline ShownPair readPair(SQLite::Statement& q)
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
std::vector<int64_t> insertPairs(SQLite::Database& db, const std::vector<ShownPair>& pairs, const std::string& source,
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

/// A write transaction that takes the write lock at once (BEGIN IMMEDIATE), so what it reads
/// cannot change before it writes; rolled back unless committed.
class WriteTransaction {
public:
    explicit WriteTransaction(SQLite::Database& db) : m_db(db) { m_db.exec("BEGIN IMMEDIATE"); }
    WriteTransaction(const WriteTransaction&) = delete;
    WriteTransaction& operator=(const WriteTransaction&) = delete;
    ~WriteTransaction()
    {
        if (!m_committed)
            try {
                m_db.exec("ROLLBACK");
            } catch (const SQLite::Exception&) { // the first error is the one reported
            }
    }
    void commit()
    {
        m_db.exec("COMMIT");
        m_committed = true;
    }

private:
    SQLite::Database& m_db;
    bool m_committed = false;
};

struct PreferenceStore::Impl {
    std::string path;
    SQLite::Database db;
    int version = 0;
    uint64_t device = 0; ///< the opened file's device and inode (stillAtItsPath)
    uint64_t inode = 0;

    Impl(std::string p, int flags) : path(std::move(p)), db(path, flags) {}

    /// Runs `body` and turns SQLite's exceptions into a user-facing error.
    template <typename T, typename F>
    Result<T> guard(const std::string& what, F&& body)
    {
        try {
            return body();
        } catch (const SQLite::Exception& e) {
            return makeError(what + " failed in '" + path + "': " + e.what());
        }
    }
};

} // namespace d2dpo
