// SPDX-License-Identifier: GPL-3.0-or-later
// PreferenceStore: the decisive labels (what export writes), and which of them a model trains on
// (its task's, by the chosen labelers), selected in SQL so that the run, the Train view's count
// and its labeler list read the same rule.
#include "store/preferencestore.h"

#include <algorithm>

#include "store/storeimpl.h"

namespace d2dpo {

namespace {

// Active left/right labels of training pairs (gold and comparison pairs train nothing) with both
// sequences; "?1" the task, then the chosen labelers (chosen()).
constexpr const char* kDecisive = R"sql(
    FROM labels l JOIN pairs p ON p.id = l.pair_id
         JOIN sequences ls ON ls.id = p.left_id JOIN sequences rs ON rs.id = p.right_id
    WHERE l.undone_at IS NULL AND l.choice IN ('left', 'right') AND p.purpose = 'train')sql";

constexpr const char* kPreferenceColumns = R"sql(
    SELECT l.choice, ls.tokens, rs.tokens, coalesce(ls.model_id, ls.made_by), coalesce(rs.model_id, rs.made_by),
           l.labeler, l.decide_ms, l.created_at, ls.task, p.id)sql";

/// The rows of a kPreferenceColumns query, as training and export see them.
std::vector<PreferenceRecord> readPreferences(sql::Statement& q)
{
    std::vector<PreferenceRecord> out;
    while (q.executeStep()) {
        const bool left = q.getColumn(0).getString() == "left";
        const std::string l = q.getColumn(1).getString(), r = q.getColumn(2).getString();
        const std::string lm = nullableText(q.getColumn(3)), rm = nullableText(q.getColumn(4));
        out.push_back({left ? l : r, left ? r : l, left ? lm : rm, left ? rm : lm, left ? Choice::Left : Choice::Right,
                       q.getColumn(5).getString(), q.getColumn(6).getInt64(), q.getColumn(7).getString(),
                       q.getColumn(8).getString(), std::to_string(q.getColumn(9).getInt64())});
    }
    return out;
}

/// The label is by one of `labelers` (parameters ?2...), or true when none are named: everyone's count.
std::string chosen(const std::vector<std::string>& labelers)
{
    if (labelers.empty())
        return " (1 = 1) ";
    std::string list;
    for (size_t i = 0; i < labelers.size(); ++i)
        list += (i ? ", ?" : "?") + std::to_string(i + 2);
    return " (l.labeler IN (" + list + ")) ";
}

void bindSelection(sql::Statement& q, const std::string& task, const std::vector<std::string>& labelers)
{
    q.bind(1, task);
    for (size_t i = 0; i < labelers.size(); ++i)
        q.bind(int(i + 2), labelers[i]);
}

} // namespace

bool isSimulatedLabeler(const std::string& labeler) { return labeler.rfind("rule:", 0) == 0; }

Result<std::vector<PreferenceRecord>> LabelQueue::preferences()
{
    if (const std::string problem = m_impl->maintainersOnlyProblem("reading the preferences"); !problem.empty())
        return makeError(ErrorCode::Denied, problem);
    return m_impl->guard<std::vector<PreferenceRecord>>("reading preferences", [&] {
        sql::Statement q(m_impl->db, std::string(kPreferenceColumns) + kDecisive + " ORDER BY l.id");
        return readPreferences(q);
    });
}

Result<std::vector<PreferenceRecord>> LabelQueue::preferences(const std::string& task,
                                                              const std::vector<std::string>& labelers)
{
    if (const std::string problem = m_impl->maintainersOnlyProblem("reading the preferences"); !problem.empty())
        return makeError(ErrorCode::Denied, problem);
    return m_impl->guard<std::vector<PreferenceRecord>>("reading preferences", [&] {
        sql::Statement q(m_impl->db, std::string(kPreferenceColumns) + kDecisive + " AND ls.task = ?1 AND" +
                                         chosen(labelers) + "ORDER BY l.id");
        bindSelection(q, task, labelers);
        return readPreferences(q);
    });
}

Result<UsablePairs> LabelQueue::usablePairs(const std::string& task, const std::vector<std::string>& labelers)
{
    return m_impl->guard<UsablePairs>("counting preferences", [&] {
        // Counted with CASE: PostgreSQL does not sum booleans.
        const std::string by = chosen(labelers);
        sql::Statement q(m_impl->db, "SELECT coalesce(sum(CASE WHEN ls.task = ?1 AND" + by + "THEN 1 ELSE 0 END), 0), "
                                     "coalesce(sum(CASE WHEN ls.task <> ?1 THEN 1 ELSE 0 END), 0), "
                                     "coalesce(sum(CASE WHEN ls.task = ?1 AND NOT" + by + "THEN 1 ELSE 0 END), 0)" +
                                         kDecisive);
        bindSelection(q, task, labelers);
        q.executeStep();
        return UsablePairs{q.getColumn(0).getInt64(), q.getColumn(1).getInt64(), q.getColumn(2).getInt64()};
    });
}

Result<std::vector<LabelerCount>> LabelQueue::labelersOf(const std::string& task)
{
    return m_impl->guard<std::vector<LabelerCount>>("counting labelers", [&] {
        sql::Statement q(m_impl->db, std::string("SELECT l.labeler, count(*) ") + kDecisive +
                                         " AND ls.task = ? GROUP BY l.labeler");
        q.bind(1, task);
        std::vector<LabelerCount> people, simulated;
        while (q.executeStep()) {
            LabelerCount c{q.getColumn(0).getString(), q.getColumn(1).getInt64(), false};
            c.simulated = isSimulatedLabeler(c.labeler);
            (c.simulated ? simulated : people).push_back(std::move(c));
        }
        // Sorted here, by bytes: a server's collation would order names by its locale.
        auto byName = [](const LabelerCount& a, const LabelerCount& b) { return a.labeler < b.labeler; };
        std::sort(people.begin(), people.end(), byName);
        std::sort(simulated.begin(), simulated.end(), byName);
        people.insert(people.end(), simulated.begin(), simulated.end());
        return people;
    });
}

} // namespace d2dpo
