// SPDX-License-Identifier: GPL-3.0-or-later
// PreferenceStore: JSONL imports (recorded, so they can be removed as one; exact duplicates left
// out, so importing a file twice changes nothing) and the deletion of labels by import, labeler
// or model (`d2dpo prefs delete`).
#include "store/preferencestore.h"

#include <map>
#include <unordered_set>

#include "base/timeutil.h"
#include "store/storeimpl.h"

namespace d2dpo {

namespace {

std::string importedLabeler(const PreferenceRecord& r) { return r.labeler.empty() ? std::string("import") : r.labeler; }

/// A decisive label's identity: its task, sequences, labeler, the side the chosen one was shown on
/// and when it was made. Two labels differ when any of these does; a line without a time is known
/// by its import key alone (the labels table keeps it), so importing it again adds nothing.
std::string identity(const std::string& task, const std::string& chosen, const std::string& rejected,
                     const std::string& labeler, const std::string& side, const std::string& at)
{
    const char sep = '\x1f'; // the unit separator: in no sequence, name or time
    return task + sep + chosen + sep + rejected + sep + labeler + sep + side + sep + at;
}

/// An undecided label's side slot holds its choice ("tie", "skip", "both-bad"), its sequences as shown.
std::string identityOf(const PreferenceRecord& r)
{
    return identity(r.task, r.chosen, r.rejected, importedLabeler(r), toString(r.choice), r.labelledAt);
}

} // namespace

Result<ImportOutcome> ImportLog::importPreferences(const std::vector<PreferenceRecord>& records, const std::string& file)
{
    return m_impl->guard<ImportOutcome>("importing preferences", [&] {
        sql::Database& db = m_impl->db;
        // The write lock first, then the check, then the inserts: two imports of the same file at
        // once cannot both find their labels missing (the second waits, then adds nothing).
        WriteTransaction transaction(db);
        std::unordered_set<std::string> seen;
        {
            sql::Statement q(db, R"sql(
                SELECT ls.task, ls.tokens, rs.tokens, l.choice, l.labeler, l.created_at, l.import_key
                FROM labels l JOIN pairs p ON p.id = l.pair_id
                     JOIN sequences ls ON ls.id = p.left_id JOIN sequences rs ON rs.id = p.right_id
                WHERE l.undone_at IS NULL)sql");
            while (q.executeStep()) {
                const std::string choice = q.getColumn(3).getString();
                const bool left = choice != "right"; // an undecided label keeps its sequences as shown
                const std::string l = q.getColumn(1).getString(), r = q.getColumn(2).getString();
                seen.insert(identity(q.getColumn(0).getString(), left ? l : r, left ? r : l, q.getColumn(4).getString(),
                                     choice, q.getColumn(5).getString()));
                if (!q.getColumn(6).isNull())
                    seen.insert(q.getColumn(6).getString());
            }
        }
        ImportOutcome outcome;
        std::vector<std::pair<const PreferenceRecord*, std::string>> fresh;
        for (const PreferenceRecord& r : records) {
            if (r.task.empty())
                throw sql::Error(sql::ErrorKind::Other, "an imported preference has no task");
            std::string key = identityOf(r);
            if (seen.insert(key).second)
                fresh.emplace_back(&r, std::move(key));
            else
                ++outcome.duplicates;
        }
        if (fresh.empty())
            return outcome;
        const std::string now = utcNow();
        sql::Statement import(db, "INSERT INTO imports (file, task, created_at) VALUES (?, ?, ?) RETURNING id");
        import.bind(1, file);
        import.bind(2, fresh.front().first->task);
        import.bind(3, now);
        outcome.importId = insertReturningId(import);
        // A model id links when that model is in this store; one from elsewhere is kept as it was
        // said (made_by), so that an export gives it back.
        sql::Statement sequence(db, "INSERT INTO sequences (model_id, made_by, tokens, created_at, task) "
                                       "VALUES ((SELECT id FROM models WHERE id = ?1), "
                                       "CASE WHEN EXISTS (SELECT 1 FROM models WHERE id = ?1) THEN NULL ELSE ?1 END, "
                                       "?2, ?3, ?4) RETURNING id");
        sql::Statement pair(db, "INSERT INTO pairs (left_id, right_id, source, created_at, import_id) "
                                   "VALUES (?, ?, 'imported', ?, ?) RETURNING id");
        sql::Statement label(db, "INSERT INTO labels (pair_id, choice, labeler, decide_ms, created_at, import_key) "
                                    "VALUES (?, ?, ?, ?, ?, ?)");
        auto addSequence = [&](const std::string& tokens, const std::string& modelId, const std::string& task) {
            sequence.reset();
            bindOptionalText(sequence, 1, modelId);
            sequence.bind(2, tokens);
            sequence.bind(3, now);
            sequence.bind(4, task);
            return insertReturningId(sequence);
        };
        // The lines of one pair in the file (its "pair" key) are labels of one pair here too, so
        // that agreement reads them as the store they came from did; they must show the same two.
        struct PairShown {
            int64_t id;
            std::string left, right;
        };
        std::map<std::string, PairShown> pairsByKey;
        for (const auto& [r, key] : fresh) {
            const bool chosenLeft = r->choice != Choice::Right; // an undecided one: as shown
            const std::string& left = chosenLeft ? r->chosen : r->rejected;
            const std::string& right = chosenLeft ? r->rejected : r->chosen;
            int64_t pairId = 0;
            if (const auto known = pairsByKey.find(r->pairKey); !r->pairKey.empty() && known != pairsByKey.end()) {
                if (known->second.left != left || known->second.right != right)
                    throw sql::Error(sql::ErrorKind::Other, "two lines of pair '" + r->pairKey +
                                                                "' show different sequences (or sides)");
                pairId = known->second.id;
            } else {
                const int64_t chosen = addSequence(r->chosen, r->chosenModelId, r->task);
                const int64_t rejected = addSequence(r->rejected, r->rejectedModelId, r->task);
                pair.reset();
                pair.bind(1, chosenLeft ? chosen : rejected);
                pair.bind(2, chosenLeft ? rejected : chosen);
                pair.bind(3, now);
                pair.bind(4, outcome.importId);
                pairId = insertReturningId(pair);
                if (!r->pairKey.empty())
                    pairsByKey.emplace(r->pairKey, PairShown{pairId, left, right});
            }
            label.reset();
            label.bind(1, pairId);
            label.bind(2, std::string(toString(r->choice)));
            label.bind(3, importedLabeler(*r));
            label.bind(4, std::max<int64_t>(0, r->decideMs));
            label.bind(5, r->labelledAt.empty() ? now : r->labelledAt);
            label.bind(6, key);
            label.exec();
            ++outcome.imported;
            outcome.undecided += r->choice == Choice::Left || r->choice == Choice::Right ? 0 : 1;
        }
        transaction.commit();
        return outcome;
    });
}

Result<std::vector<ImportRecord>> ImportLog::imports()
{
    return m_impl->guard<std::vector<ImportRecord>>("listing imports", [&] {
        sql::Statement q(m_impl->db, "SELECT i.id, i.file, i.task, i.created_at, "
                                        "(SELECT count(*) FROM pairs p WHERE p.import_id = i.id) FROM imports i "
                                        "ORDER BY i.id");
        std::vector<ImportRecord> out;
        while (q.executeStep())
            out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getString(), q.getColumn(2).getString(),
                           q.getColumn(3).getString(), q.getColumn(4).getInt64()});
        return out;
    });
}

Result<DeletedLabels> ImportLog::deleteLabels(const LabelSelection& selection, bool dryRun)
{
    if (!selection.importId && selection.labeler.empty() && selection.modelId.empty())
        return makeError("name what to delete: an import, a labeler or a model");
    if (!selection.labeler.empty() && (selection.importId || !selection.modelId.empty()))
        return makeError("name one of an import, a labeler or a model: an import's or a model's pairs go with "
                         "every label on them, a labeler's labels go without their pairs");
    if (selection.importId && !selection.modelId.empty())
        return makeError("name one of an import or a model, not both");
    return m_impl->guard<DeletedLabels>("deleting labels", [&] {
        sql::Database& db = m_impl->db;
        sql::WriteTransaction transaction(db);
        // The selected pairs, in a temporary table the statements below share.
        db.exec("CREATE TEMP TABLE IF NOT EXISTS selected_pairs (id INTEGER PRIMARY KEY)");
        db.exec("DELETE FROM selected_pairs");
        const bool wholePairs = selection.importId || !selection.modelId.empty();
        sql::Statement select(db, R"sql(
            INSERT INTO selected_pairs (id)
            SELECT p.id FROM pairs p JOIN sequences ls ON ls.id = p.left_id JOIN sequences rs ON rs.id = p.right_id
            WHERE (CAST(?1 AS BIGINT) IS NULL OR p.import_id = ?1)
              AND (?2 IS NULL OR ls.model_id = ?2 OR rs.model_id = ?2)
              AND (?3 IS NULL OR EXISTS (SELECT 1 FROM labels l WHERE l.pair_id = p.id AND l.labeler = ?3)))sql");
        if (selection.importId)
            select.bind(1, *selection.importId);
        bindOptionalText(select, 2, selection.modelId);
        bindOptionalText(select, 3, selection.labeler);
        select.exec();

        DeletedLabels counted;
        // With a labeler only that labeler's labels go; otherwise every label of the selected pairs.
        sql::Statement labels(db, "SELECT count(*) FROM labels WHERE pair_id IN (SELECT id FROM selected_pairs) "
                                     "AND (?1 IS NULL OR labeler = ?1)");
        bindOptionalText(labels, 1, selection.labeler);
        labels.executeStep();
        counted.labels = labels.getColumn(0).getInt64();
        if (wholePairs) {
            counted.pairs = db.execAndGet("SELECT count(*) FROM selected_pairs").getInt64();
            // The selected pairs' sequences that no other pair shows: found by index, so a delete
            // costs what it removes, not the store's size times it.
            counted.sequences = db.execAndGet(R"sql(
                SELECT count(*) FROM (SELECT left_id AS id FROM pairs WHERE id IN (SELECT id FROM selected_pairs)
                                      UNION SELECT right_id FROM pairs WHERE id IN (SELECT id FROM selected_pairs)) s
                WHERE NOT EXISTS (SELECT 1 FROM pairs p WHERE p.left_id = s.id AND p.id NOT IN (SELECT id FROM selected_pairs))
                  AND NOT EXISTS (SELECT 1 FROM pairs p WHERE p.right_id = s.id AND p.id NOT IN (SELECT id FROM selected_pairs)))sql")
                                    .getInt64();
        }
        if (dryRun)
            return counted; // the transaction rolls back
        sql::Statement removeLabels(db, "DELETE FROM labels WHERE pair_id IN (SELECT id FROM selected_pairs) "
                                           "AND (?1 IS NULL OR labeler = ?1)");
        bindOptionalText(removeLabels, 1, selection.labeler);
        removeLabels.exec();
        if (wholePairs) {
            db.exec("CREATE TEMP TABLE IF NOT EXISTS selected_sequences (id INTEGER PRIMARY KEY)");
            db.exec("DELETE FROM selected_sequences");
            db.exec("INSERT INTO selected_sequences SELECT left_id FROM pairs WHERE id IN "
                    "(SELECT id FROM selected_pairs) UNION SELECT right_id FROM pairs WHERE id IN "
                    "(SELECT id FROM selected_pairs)");
            db.exec("DELETE FROM pairs WHERE id IN (SELECT id FROM selected_pairs)");
            db.exec("DELETE FROM sequences WHERE id IN (SELECT id FROM selected_sequences) "
                    "AND NOT EXISTS (SELECT 1 FROM pairs p WHERE p.left_id = sequences.id) "
                    "AND NOT EXISTS (SELECT 1 FROM pairs p WHERE p.right_id = sequences.id)");
            db.exec("DELETE FROM imports WHERE NOT EXISTS (SELECT 1 FROM pairs p WHERE p.import_id = imports.id)");
        }
        transaction.commit();
        return counted;
    });
}

} // namespace d2dpo
