// SPDX-License-Identifier: GPL-3.0-or-later
// PreferenceStore: the sequences, the pairs as shown, the labels (undo keeps history) and the
// decisive preferences that training and export read.
#include "store/preferencestore.h"

#include "base/timeutil.h"
#include "store/storeimpl.h"

namespace d2dpo {

std::string pairsProblem(const std::vector<ShownPair>& pairs)
{
    for (const ShownPair& p : pairs)
        if (p.left == p.right)
            return "a pair of two identical sequences is not shown (" + p.left + ")";
        else if (p.task.empty())
            return "a pair without its task cannot be stored (" + p.left + ", " + p.right + ")";
    return {};
}

std::vector<int64_t> insertPairs(sql::Database& db, const std::vector<ShownPair>& pairs, const std::string& source,
                                 const PairExtras& extras)
{
    sql::Statement sequence(db, "INSERT INTO sequences (model_id, tokens, created_at, task) VALUES (?, ?, ?, ?) "
                                "RETURNING id");
    sql::Statement pair(db, "INSERT INTO pairs (left_id, right_id, source, created_at, purpose, gold_choice, "
                            "comparison_id) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id");
    const std::string now = utcNow();
    auto addSequence = [&](const std::string& tokens, const std::string& modelId, const std::string& task) {
        sequence.reset();
        bindOptionalText(sequence, 1, modelId);
        sequence.bind(2, tokens);
        sequence.bind(3, now);
        sequence.bind(4, task);
        return insertReturningId(sequence);
    };
    std::vector<int64_t> ids;
    for (size_t i = 0; i < pairs.size(); ++i) {
        const ShownPair& p = pairs[i];
        const int64_t left = addSequence(p.left, p.leftModelId, p.task);
        const int64_t right = addSequence(p.right, p.rightModelId, p.task);
        pair.reset();
        pair.bind(1, left);
        pair.bind(2, right);
        pair.bind(3, source);
        pair.bind(4, now);
        pair.bind(5, extras.purpose);
        bindOptionalText(pair, 6, i < extras.goldAnswers.size() ? extras.goldAnswers[i] : std::string());
        if (extras.comparisonId)
            pair.bind(7, *extras.comparisonId);
        else
            pair.bind(7);
        ids.push_back(insertReturningId(pair));
    }
    return ids;
}

Result<std::vector<int64_t>> LabelQueue::addPairs(const std::vector<ShownPair>& pairs, const std::string& source)
{
    if (const std::string problem = pairsProblem(pairs); !problem.empty())
        return makeError(problem);
    return m_impl->guard<std::vector<int64_t>>("storing pairs", [&] {
        sql::WriteTransaction transaction(m_impl->db);
        std::vector<int64_t> ids = insertPairs(m_impl->db, pairs, source);
        transaction.commit();
        return ids;
    });
}

Result<ShownPair> LabelQueue::pair(int64_t id)
{
    return m_impl->guard<ShownPair>("reading pair", [&]() -> Result<ShownPair> {
        sql::Statement q(m_impl->db, pairSelectSql(!m_impl->labelerOnly()) + " WHERE p.id = ?");
        q.bind(1, id);
        if (!q.executeStep())
            return makeError("pair " + std::to_string(id) + " does not exist");
        return readPair(q);
    });
}

Result<int64_t> LabelQueue::addLabel(int64_t pairId, Choice choice, const std::string& labeler, int64_t decideMs)
{
    if (const std::string problem = labelerNameProblem(labeler); !problem.empty())
        return makeError(problem);
    if (const std::string problem = m_impl->actingForOthersProblem(labeler); !problem.empty())
        return makeError(ErrorCode::Denied, problem);
    const std::string pairName = "pair " + std::to_string(pairId);
    try {
        sql::Database& db = m_impl->db;
        // The overlap is read and the label written under one write lock: two labelers pressing at
        // once cannot take a pair past its overlap. Committed before this returns.
        WriteTransaction transaction(db);
        if (m_impl->labelerOnly()) {
            // The server checks it all and sets the rest; a labeler reads neither a pair's purpose
            // nor its count of labels (postgresqueue.cpp), so there is nothing to check here first.
            sql::Statement add(db, "SELECT d2dpo_add_label(?, ?, ?)");
            add.bind(1, pairId);
            add.bind(2, toString(choice));
            add.bind(3, decideMs);
            const int64_t id = insertReturningId(add);
            transaction.commit();
            return id;
        }
        if (m_impl->team()) {
            // A labeler's label locks its pair's row rather than the store (postgresaccess.cpp):
            // so does a maintainer's, so that the two cannot pass the overlap together.
            sql::Statement lockPair(db, "SELECT 1 FROM pairs WHERE id = ? FOR NO KEY UPDATE");
            lockPair.bind(1, pairId);
            lockPair.exec();
        }
        sql::Statement state(db, std::string("SELECT p.purpose, ") + kActiveLabelsSql + R"sql(,
                   EXISTS (SELECT 1 FROM labels l WHERE l.pair_id = p.id AND l.undone_at IS NULL AND l.labeler = ?2),
                   )sql" + kOverlapSql +
                                     " FROM pairs p WHERE p.id = ?1");
        state.bind(1, pairId);
        state.bind(2, labeler);
        if (!state.executeStep())
            return makeError(ErrorCode::NotFound, pairName + " does not exist");
        const bool gold = state.getColumn(0).getString() == "gold";
        const int64_t active = state.getColumn(1).getInt64(), overlap = state.getColumn(3).getInt64();
        if (state.getColumn(2).getInt() != 0)
            return makeError(ErrorCode::AlreadyLabelled, pairName + " already has a label by " + labeler);
        if (!gold && active >= overlap)
            return makeError(ErrorCode::AlreadyLabelled,
                             overlap == 1 ? pairName + " already has a label"
                                          : pairName + " already has its " + std::to_string(overlap) + " labels");
        state.reset();
        sql::Statement q(db, "INSERT INTO labels (pair_id, choice, labeler, decide_ms, created_at) "
                             "VALUES (?, ?, ?, ?, ?) RETURNING id");
        q.bind(1, pairId);
        q.bind(2, toString(choice));
        q.bind(3, labeler);
        q.bind(4, std::max<int64_t>(0, decideMs));
        q.bind(5, utcNow());
        const int64_t id = insertReturningId(q);
        sql::Statement leased(db, "DELETE FROM leases WHERE pair_id = ? AND labeler = ?"); // the lease became a label
        leased.bind(1, pairId);
        leased.bind(2, labeler);
        leased.exec();
        transaction.commit();
        return id;
    } catch (const sql::Error& e) {
        if (m_impl->labelerOnly() && e.kind() == sql::ErrorKind::Constraint) // the server's own sentence
            return makeError(ErrorCode::AlreadyLabelled, e.what());
        if (m_impl->labelerOnly() && e.code() == "P0002") // no_data_found: deleted since it was handed out
            return makeError(ErrorCode::NotFound, e.what());
        if (m_impl->labelerOnly() && e.kind() == sql::ErrorKind::Permission && e.code() == "42501")
            return makeError(ErrorCode::Denied, e.what());
        if (isUniqueViolation(e))
            return makeError(ErrorCode::AlreadyLabelled, pairName + " already has a label by " + labeler);
        return makeError(StoreImpl::errorCodeOf(e),
                         "storing the label failed in '" + m_impl->displayName() + "': " + e.what());
    }
}

Result<std::optional<int64_t>> LabelQueue::undoLastLabel(const std::string& labeler)
{
    if (const std::string problem = m_impl->actingForOthersProblem(labeler); !problem.empty())
        return makeError(ErrorCode::Denied, problem);
    return m_impl->guard<std::optional<int64_t>>("undoing a label", [&]() -> std::optional<int64_t> {
        if (m_impl->labelerOnly()) {
            const sql::Value pair = m_impl->db.execAndGet("SELECT d2dpo_undo_label(NULL)");
            return pair.isNull() ? std::nullopt : std::optional<int64_t>(pair.getInt64());
        }
        sql::Statement q(m_impl->db, R"sql(
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

Result<std::vector<int64_t>> LabelQueue::undoLabels(const std::vector<int64_t>& labelIds)
{
    return m_impl->guard<std::vector<int64_t>>("undoing labels", [&] {
        sql::WriteTransaction transaction(m_impl->db);
        // A team store's labeler undoes through the server, which finds only its own labels.
        const bool throughServer = m_impl->labelerOnly();
        sql::Statement q(m_impl->db, throughServer ? "SELECT d2dpo_undo_label(?1)"
                                                   : "UPDATE labels SET undone_at = ?2 WHERE id = ?1 "
                                                     "AND undone_at IS NULL RETURNING pair_id");
        const std::string now = utcNow();
        std::vector<int64_t> pairs;
        for (int64_t id : labelIds) {
            q.reset();
            q.bind(1, id);
            if (!throughServer)
                q.bind(2, now);
            if (q.executeStep() && !q.getColumn(0).isNull())
                pairs.push_back(q.getColumn(0).getInt64());
        }
        q.reset(); // a statement still in progress would keep the commit from happening
        transaction.commit();
        return pairs;
    });
}

Result<LabelCounts> LabelQueue::counts(const std::string& labeler)
{
    if (m_impl->labelerOnly())
        return m_impl->guard<LabelCounts>("counting labels", [&] {
            // What waits for a labeler is counted by the server, which alone reads which pairs are gold.
            sql::Statement q(m_impl->db, R"sql(
                SELECT (SELECT coalesce(sum(labels), 0) FROM labeler_tally),
                       (SELECT count(*) FROM labels WHERE undone_at IS NULL AND labeler = ?), w.waiting, w.decisive
                FROM d2dpo_queue_counts() w)sql");
            q.bind(1, labeler);
            q.executeStep();
            return LabelCounts{q.getColumn(0).getInt64(), q.getColumn(1).getInt64(), q.getColumn(2).getInt64(),
                               q.getColumn(3).getInt64()};
        });
    return m_impl->guard<LabelCounts>("counting labels", [&] {
        sql::Statement q(m_impl->db, R"sql(
            SELECT (SELECT coalesce(sum(labels), 0) FROM labeler_tally),
                   (SELECT count(*) FROM labels WHERE undone_at IS NULL AND labeler = ?),
                   (SELECT count(*) FROM pairs p WHERE p.purpose <> 'gold'
                        AND )sql" + std::string(kActiveLabelsSql) +
                                         " < " + kOverlapSql + R"sql(
                        AND NOT EXISTS (SELECT 1 FROM labels l
                                        WHERE l.pair_id = p.id AND l.undone_at IS NULL AND l.labeler = ?)),
                   (SELECT count(*) FROM labels l JOIN pairs p ON p.id = l.pair_id
                    WHERE l.undone_at IS NULL AND l.choice IN ('left', 'right') AND p.purpose = 'train'))sql");
        q.bind(1, labeler);
        q.bind(2, labeler);
        q.executeStep();
        return LabelCounts{q.getColumn(0).getInt64(), q.getColumn(1).getInt64(), q.getColumn(2).getInt64(),
                           q.getColumn(3).getInt64()};
    });
}

Result<std::vector<LabelRecord>> LabelQueue::labels(bool includeUndone)
{
    return m_impl->guard<std::vector<LabelRecord>>("listing labels", [&] {
        sql::Statement q(m_impl->db, std::string("SELECT id, pair_id, choice, labeler, decide_ms, created_at, "
                                                 "undone_at IS NOT NULL FROM labels") +
                                         (includeUndone ? "" : " WHERE undone_at IS NULL") + " ORDER BY id");
        std::vector<LabelRecord> out;
        while (q.executeStep())
            out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getInt64(),
                           choiceFromString(q.getColumn(2).getString()).value_or(Choice::Skip), q.getColumn(3).getString(),
                           q.getColumn(4).getInt64(), q.getColumn(5).getString(), q.getColumn(6).getInt() != 0});
        return out;
    });
}

Result<std::vector<std::pair<ShownPair, LabelRecord>>> LabelQueue::labelledPairs(const std::string& labeler)
{
    return activeLabels(labeler, false);
}

Result<std::vector<std::pair<ShownPair, LabelRecord>>> LabelQueue::undecidedLabels() { return activeLabels("", true); }

Result<std::vector<std::pair<ShownPair, LabelRecord>>> LabelQueue::activeLabels(const std::string& labeler,
                                                                                bool undecidedOnly)
{
    using Row = std::pair<ShownPair, LabelRecord>;
    return m_impl->guard<std::vector<Row>>("reading labels", [&] {
        // The pair's columns as pairSelectSql has them, then the label's.
        sql::Statement full(m_impl->db, "SELECT " + pairColumnsSql(!m_impl->labelerOnly(), undecidedOnly) + R"sql(,
                   l.id, l.choice, l.decide_ms, l.created_at, l.labeler
            FROM labels l JOIN pairs p ON p.id = l.pair_id
                 JOIN sequences ls ON ls.id = p.left_id JOIN sequences rs ON rs.id = p.right_id
            WHERE l.undone_at IS NULL AND (?1 IS NULL OR l.labeler = ?1)
              AND (?2 = 0 OR (l.choice NOT IN ('left', 'right') AND )sql" +
                                            // a labeler reads no purpose: its own gold labels count as training ones
                                            std::string(m_impl->labelerOnly() ? "p.comparison_id IS NULL"
                                                                              : "p.purpose = 'train'") +
                                            ")) ORDER BY l.id");
        bindOptionalText(full, 1, labeler);
        full.bind(2, undecidedOnly ? 1 : 0);
        std::vector<Row> out;
        while (full.executeStep()) {
            LabelRecord label{full.getColumn(7).getInt64(),
                              full.getColumn(0).getInt64(),
                              choiceFromString(full.getColumn(8).getString()).value_or(Choice::Skip),
                              full.getColumn(11).getString(),
                              full.getColumn(9).getInt64(),
                              full.getColumn(10).getString(),
                              false};
            out.emplace_back(readPair(full), label);
        }
        return out;
    });
}

} // namespace d2dpo
