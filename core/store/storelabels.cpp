// SPDX-License-Identifier: GPL-3.0-or-later
// PreferenceStore: the sequences, the pairs as shown, the labels (undo keeps history) and the
// decisive preferences that training and export read.
#include "store/preferencestore.h"

#include <sqlite3.h>

#include "base/timeutil.h"
#include "store/storeimpl.h"

namespace d2dpo {

namespace {

ShownPair readPair(SQLite::Statement& q)
{
    return {q.getColumn(0).getInt64(), q.getColumn(1).getString(), q.getColumn(2).getString(),
            nullableText(q.getColumn(3)), nullableText(q.getColumn(4)), q.getColumn(5).getString()};
}

constexpr const char* kPairSelect = R"sql(
    SELECT p.id, ls.tokens, rs.tokens, ls.model_id, rs.model_id, ls.task
    FROM pairs p JOIN sequences ls ON ls.id = p.left_id JOIN sequences rs ON rs.id = p.right_id)sql";

} // namespace

Result<std::vector<int64_t>> PreferenceStore::addPairs(const std::vector<ShownPair>& pairs, const std::string& source)
{
    for (const ShownPair& p : pairs)
        if (p.left == p.right)
            return makeError("a pair of two identical sequences is not shown (" + p.left + ")");
        else if (p.task.empty())
            return makeError("a pair without its task cannot be stored (" + p.left + ", " + p.right + ")");
    return m_impl->guard<std::vector<int64_t>>("storing pairs", [&] {
        SQLite::Database& db = m_impl->db;
        SQLite::Transaction transaction(db);
        SQLite::Statement sequence(db, "INSERT INTO sequences (model_id, tokens, created_at, task) VALUES (?, ?, ?, ?)");
        SQLite::Statement pair(db, "INSERT INTO pairs (left_id, right_id, source, created_at) VALUES (?, ?, ?, ?)");
        const std::string now = utcNow();
        auto addSequence = [&](const std::string& tokens, const std::string& modelId, const std::string& task) {
            sequence.reset();
            bindOptionalText(sequence, 1, modelId);
            sequence.bind(2, tokens);
            sequence.bind(3, now);
            sequence.bind(4, task);
            sequence.exec();
            return db.getLastInsertRowid();
        };
        std::vector<int64_t> ids;
        for (const ShownPair& p : pairs) {
            const int64_t left = addSequence(p.left, p.leftModelId, p.task);
            const int64_t right = addSequence(p.right, p.rightModelId, p.task);
            pair.reset();
            pair.bind(1, left);
            pair.bind(2, right);
            pair.bind(3, source);
            pair.bind(4, now);
            pair.exec();
            ids.push_back(db.getLastInsertRowid());
        }
        transaction.commit();
        return ids;
    });
}

Result<std::vector<ShownPair>> PreferenceStore::pendingPairs(int64_t limit, const std::string& task)
{
    return m_impl->guard<std::vector<ShownPair>>("reading pending pairs", [&] {
        SQLite::Statement q(m_impl->db, std::string(kPairSelect) + R"sql(
            WHERE NOT EXISTS (SELECT 1 FROM labels l WHERE l.pair_id = p.id AND l.undone_at IS NULL)
              AND (? = '' OR ls.task = ?)
            ORDER BY p.id LIMIT ?)sql");
        q.bind(1, task);
        q.bind(2, task);
        q.bind(3, limit);
        std::vector<ShownPair> out;
        while (q.executeStep())
            out.push_back(readPair(q));
        return out;
    });
}

Result<ShownPair> PreferenceStore::pair(int64_t id)
{
    return m_impl->guard<ShownPair>("reading pair", [&]() -> Result<ShownPair> {
        SQLite::Statement q(m_impl->db, std::string(kPairSelect) + " WHERE p.id = ?");
        q.bind(1, id);
        if (!q.executeStep())
            return makeError("pair " + std::to_string(id) + " does not exist");
        return readPair(q);
    });
}

Result<int64_t> PreferenceStore::addLabel(int64_t pairId, Choice choice, const std::string& labeler, int64_t decideMs)
{
    if (const std::string problem = labelerNameProblem(labeler); !problem.empty())
        return makeError(problem);
    try {
        // Autocommit: the row is durable when exec() returns.
        SQLite::Statement q(m_impl->db, "INSERT INTO labels (pair_id, choice, labeler, decide_ms, created_at) "
                                        "VALUES (?, ?, ?, ?, ?)");
        q.bind(1, pairId);
        q.bind(2, toString(choice));
        q.bind(3, labeler);
        q.bind(4, std::max<int64_t>(0, decideMs));
        q.bind(5, utcNow());
        q.exec();
        return m_impl->db.getLastInsertRowid();
    } catch (const SQLite::Exception& e) {
        if (e.getExtendedErrorCode() == SQLITE_CONSTRAINT_UNIQUE)
            return makeError(ErrorCode::AlreadyLabelled, "pair " + std::to_string(pairId) + " already has a label");
        if (e.getExtendedErrorCode() == SQLITE_CONSTRAINT_FOREIGNKEY)
            return makeError(ErrorCode::NotFound, "pair " + std::to_string(pairId) + " does not exist");
        return makeError("storing the label failed in '" + m_impl->path + "': " + e.what());
    }
}

Result<std::optional<int64_t>> PreferenceStore::undoLastLabel(const std::string& labeler)
{
    return m_impl->guard<std::optional<int64_t>>("undoing a label", [&]() -> std::optional<int64_t> {
        SQLite::Statement q(m_impl->db, R"sql(
            UPDATE labels SET undone_at = ?
            WHERE id = (SELECT id FROM labels WHERE labeler = ? AND undone_at IS NULL ORDER BY id DESC LIMIT 1)
            RETURNING pair_id)sql");
        q.bind(1, utcNow());
        q.bind(2, labeler);
        if (!q.executeStep())
            return std::nullopt;
        return q.getColumn(0).getInt64();
    });
}

Result<std::vector<int64_t>> PreferenceStore::undoLabels(const std::vector<int64_t>& labelIds)
{
    return m_impl->guard<std::vector<int64_t>>("undoing labels", [&] {
        SQLite::Transaction transaction(m_impl->db);
        SQLite::Statement q(m_impl->db,
                            "UPDATE labels SET undone_at = ? WHERE id = ? AND undone_at IS NULL RETURNING pair_id");
        const std::string now = utcNow();
        std::vector<int64_t> pairs;
        for (int64_t id : labelIds) {
            q.reset();
            q.bind(1, now);
            q.bind(2, id);
            if (q.executeStep())
                pairs.push_back(q.getColumn(0).getInt64());
        }
        q.reset(); // a statement still in progress would keep the commit from happening
        transaction.commit();
        return pairs;
    });
}

Result<LabelCounts> PreferenceStore::counts(const std::string& labeler)
{
    return m_impl->guard<LabelCounts>("counting labels", [&] {
        SQLite::Statement q(m_impl->db, R"sql(
            SELECT (SELECT count(*) FROM labels WHERE undone_at IS NULL),
                   (SELECT count(*) FROM labels WHERE undone_at IS NULL AND labeler = ?),
                   (SELECT count(*) FROM pairs p WHERE NOT EXISTS
                        (SELECT 1 FROM labels l WHERE l.pair_id = p.id AND l.undone_at IS NULL)),
                   (SELECT count(*) FROM labels WHERE undone_at IS NULL AND choice IN ('left', 'right')))sql");
        q.bind(1, labeler);
        q.executeStep();
        return LabelCounts{q.getColumn(0).getInt64(), q.getColumn(1).getInt64(), q.getColumn(2).getInt64(),
                           q.getColumn(3).getInt64()};
    });
}

Result<std::vector<LabelRecord>> PreferenceStore::labels(bool includeUndone)
{
    return m_impl->guard<std::vector<LabelRecord>>("listing labels", [&] {
        SQLite::Statement q(m_impl->db, std::string("SELECT id, pair_id, choice, labeler, decide_ms, created_at, "
                                                    "undone_at IS NOT NULL FROM labels") +
                                            (includeUndone ? "" : " WHERE undone_at IS NULL") + " ORDER BY id");
        std::vector<LabelRecord> out;
        while (q.executeStep())
            out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getInt64(),
                           choiceFromString(q.getColumn(2).getString()).value_or(Choice::Skip),
                           q.getColumn(3).getString(), q.getColumn(4).getInt64(), q.getColumn(5).getString(),
                           q.getColumn(6).getInt() != 0});
        return out;
    });
}

Result<std::vector<std::pair<ShownPair, LabelRecord>>> PreferenceStore::labelledPairs(const std::string& labeler)
{
    return activeLabels(labeler, false);
}

Result<std::vector<std::pair<ShownPair, LabelRecord>>> PreferenceStore::undecidedLabels()
{
    return activeLabels("", true);
}

Result<std::vector<std::pair<ShownPair, LabelRecord>>> PreferenceStore::activeLabels(const std::string& labeler,
                                                                                    bool undecidedOnly)
{
    using Row = std::pair<ShownPair, LabelRecord>;
    return m_impl->guard<std::vector<Row>>("reading labels", [&] {
        // The pair's columns as kPairSelect has them, then the label's.
        SQLite::Statement full(m_impl->db, R"sql(
            SELECT p.id, ls.tokens, rs.tokens, ls.model_id, rs.model_id, ls.task,
                   l.id, l.choice, l.decide_ms, l.created_at, l.labeler
            FROM labels l JOIN pairs p ON p.id = l.pair_id
                 JOIN sequences ls ON ls.id = p.left_id JOIN sequences rs ON rs.id = p.right_id
            WHERE l.undone_at IS NULL AND (?1 IS NULL OR l.labeler = ?1)
              AND (?2 = 0 OR l.choice NOT IN ('left', 'right')) ORDER BY l.id)sql");
        bindOptionalText(full, 1, labeler);
        full.bind(2, undecidedOnly ? 1 : 0);
        std::vector<Row> out;
        while (full.executeStep()) {
            LabelRecord label{full.getColumn(6).getInt64(), full.getColumn(0).getInt64(),
                              choiceFromString(full.getColumn(7).getString()).value_or(Choice::Skip),
                              full.getColumn(10).getString(), full.getColumn(8).getInt64(),
                              full.getColumn(9).getString(), false};
            out.emplace_back(readPair(full), label);
        }
        return out;
    });
}

} // namespace d2dpo
