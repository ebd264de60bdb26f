// SPDX-License-Identifier: GPL-3.0-or-later
// PreferenceStore: blind comparisons of models (pairs with one sample of each of two models, the
// models hidden from the labeler) and every active label with its pair, as the agreement and
// comparison reports read them.
#include "store/preferencestore.h"

#include <nlohmann/json.hpp>

#include "base/timeutil.h"
#include "store/storeimpl.h"

namespace d2dpo {

Result<int64_t> ComparisonBook::addComparison(const std::string& task, const std::vector<std::string>& modelIds,
                                              const std::vector<ShownPair>& pairs)
{
    if (modelIds.size() < 2)
        return makeError("a comparison needs two models or more");
    if (const std::string problem = pairsProblem(pairs); !problem.empty())
        return makeError(problem);
    for (const ShownPair& p : pairs)
        if (p.task != task || p.leftModelId.empty() || p.rightModelId.empty() || p.leftModelId == p.rightModelId)
            return makeError("a comparison's pair holds one sample of each of two of its models, of its task");
    return m_impl->guard<int64_t>("storing a comparison", [&]() -> Result<int64_t> {
        sql::Database& db = m_impl->db;
        sql::WriteTransaction transaction(db);
        sql::Statement known(db, "SELECT 1 FROM models WHERE id = ?");
        for (const std::string& id : modelIds) {
            known.reset();
            known.bind(1, id);
            if (!known.executeStep())
                return makeError(ErrorCode::NotFound, "model " + id + " is not in the store");
        }
        sql::Statement comparison(db, "INSERT INTO comparisons (task, models_json, created_at) VALUES (?, ?, ?) "
                                      "RETURNING id");
        comparison.bind(1, task);
        comparison.bind(2, nlohmann::json(modelIds).dump());
        comparison.bind(3, utcNow());
        PairExtras extras;
        extras.purpose = "compare";
        extras.comparisonId = insertReturningId(comparison);
        insertPairs(db, pairs, "compare", extras);
        transaction.commit();
        return *extras.comparisonId;
    });
}

Result<std::vector<ComparisonRecord>> ComparisonBook::comparisons()
{
    return m_impl->guard<std::vector<ComparisonRecord>>("listing comparisons", [&] {
        sql::Statement q(m_impl->db, R"sql(
            SELECT c.id, c.task, c.models_json, c.created_at,
                   (SELECT count(*) FROM pairs p WHERE p.comparison_id = c.id),
                   (SELECT count(*) FROM labels l JOIN pairs p ON p.id = l.pair_id
                    WHERE p.comparison_id = c.id AND l.undone_at IS NULL)
            FROM comparisons c ORDER BY c.id)sql");
        std::vector<ComparisonRecord> out;
        while (q.executeStep())
            out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getString(),
                           nlohmann::json::parse(q.getColumn(2).getString()).get<std::vector<std::string>>(),
                           q.getColumn(3).getString(), q.getColumn(4).getInt64(), q.getColumn(5).getInt64()});
        return out;
    });
}

Result<std::vector<JudgedLabel>> ComparisonBook::judgedLabels(int64_t comparisonId)
{
    return m_impl->guard<std::vector<JudgedLabel>>("reading labels", [&] {
        // A team store's labeler reads its own labels without the answers and the models behind
        // them (the server would refuse it those columns).
        const std::string hidden =
            m_impl->labelerOnly() ? "CAST(NULL AS TEXT), p.comparison_id, ls.tokens, rs.tokens, CAST(NULL AS TEXT), "
                                    "CAST(NULL AS TEXT)"
                                  : "p.gold_choice, p.comparison_id, ls.tokens, rs.tokens, ls.model_id, rs.model_id";
        const std::string purposeSql = m_impl->labelerOnly()
                                        ? "CASE WHEN p.comparison_id IS NULL THEN 'train' ELSE 'compare' END"
                                        : "p.purpose"; // a labeler is not told which of its pairs were gold
        sql::Statement q(m_impl->db, "SELECT l.id, p.id, " + purposeSql + ", " + hidden + R"sql(,
                   ls.task, l.labeler, l.choice, l.decide_ms
            FROM labels l JOIN pairs p ON p.id = l.pair_id
                 JOIN sequences ls ON ls.id = p.left_id JOIN sequences rs ON rs.id = p.right_id
            WHERE l.undone_at IS NULL AND (?1 = 0 OR p.comparison_id = ?1)
            ORDER BY l.id)sql");
        q.bind(1, comparisonId);
        std::vector<JudgedLabel> out;
        while (q.executeStep()) {
            JudgedLabel j;
            j.labelId = q.getColumn(0).getInt64();
            j.pairId = q.getColumn(1).getInt64();
            const std::string purpose = q.getColumn(2).getString();
            j.purpose = purpose == "gold"      ? PairPurpose::Gold
                        : purpose == "compare" ? PairPurpose::Compare
                                               : PairPurpose::Train;
            if (!q.getColumn(3).isNull())
                j.goldAnswer = choiceFromString(q.getColumn(3).getString());
            j.comparisonId = q.getColumn(4).isNull() ? 0 : q.getColumn(4).getInt64();
            j.left = q.getColumn(5).getString();
            j.right = q.getColumn(6).getString();
            j.leftModelId = nullableText(q.getColumn(7));
            j.rightModelId = nullableText(q.getColumn(8));
            j.task = q.getColumn(9).getString();
            j.labeler = q.getColumn(10).getString();
            j.choice = choiceFromString(q.getColumn(11).getString()).value_or(Choice::Skip);
            j.decideMs = q.getColumn(12).getInt64();
            out.push_back(std::move(j));
        }
        return out;
    });
}

} // namespace d2dpo
