// SPDX-License-Identifier: GPL-3.0-or-later
// PreferenceStore as an AssayBook (store/assaybook.h): measurements imported once per file,
// listed by assay and taken out by import.
#include "store/preferencestore.h"

#include "base/timeutil.h"
#include "store/storeimpl.h"

namespace d2dpo {

namespace {

constexpr const char* kWhatMaintainersDo = "measurements";

} // namespace

Result<AssayImportOutcome> AssayBook::importMeasurements(const AssayRecord& assay, const std::string& file,
                                                         const std::string& digest,
                                                         const std::vector<StoredMeasurement>& values)
{
    if (const std::string problem = m_impl->maintainersOnlyProblem(kWhatMaintainersDo); !problem.empty())
        return makeError(ErrorCode::Denied, problem);
    if (assay.name.empty() || (assay.direction != "higher" && assay.direction != "lower") || assay.task.empty())
        return makeError("an assay needs a name, a direction (higher or lower) and a task");
    if (values.empty())
        return makeError("the file holds no measurement; nothing was stored");
    return m_impl->guard<AssayImportOutcome>("importing measurements", [&]() -> Result<AssayImportOutcome> {
        sql::Database& db = m_impl->db;
        // The write lock first: two imports of one file at once cannot both find it missing.
        WriteTransaction transaction(db);
        {
            sql::Statement known(db, "SELECT direction, task FROM assays WHERE name = ?");
            known.bind(1, assay.name);
            if (known.executeStep()) {
                const std::string direction = known.getColumn(0).getString(), task = known.getColumn(1).getString();
                if (direction != assay.direction || task != assay.task)
                    return makeError("the assay '" + assay.name + "' holds values where " + direction +
                                     " is better, for the task " + task + "; this file says " + assay.direction +
                                     " for " + assay.task + ": import it under another assay name");
            } else {
                sql::Statement add(db, "INSERT INTO assays (name, direction, task, created_at) VALUES (?, ?, ?, ?)");
                add.bind(1, assay.name);
                add.bind(2, assay.direction);
                add.bind(3, assay.task);
                add.bind(4, utcNow());
                add.exec();
            }
        }
        AssayImportOutcome outcome;
        {
            sql::Statement earlier(db, "SELECT id FROM assay_imports WHERE assay = ? AND digest = ?");
            earlier.bind(1, assay.name);
            earlier.bind(2, digest);
            if (earlier.executeStep()) {
                outcome.importId = earlier.getColumn(0).getInt64();
                outcome.alreadyImported = true;
                return outcome; // the transaction rolls back: nothing changes
            }
        }
        sql::Statement import(db, "INSERT INTO assay_imports (assay, file, digest, created_at) VALUES (?, ?, ?, ?) "
                                  "RETURNING id");
        import.bind(1, assay.name);
        import.bind(2, file);
        import.bind(3, digest);
        import.bind(4, utcNow());
        outcome.importId = insertReturningId(import);
        sql::Statement insert(db, "INSERT INTO measurements (import_id, tokens, value, sd, replicates, line) "
                                  "VALUES (?, ?, ?, ?, ?, ?)");
        for (const StoredMeasurement& m : values) {
            insert.reset();
            insert.bind(1, outcome.importId);
            insert.bind(2, m.tokens);
            insert.bind(3, m.value);
            if (m.sd)
                insert.bind(4, *m.sd);
            else
                insert.bind(4);
            insert.bind(5, m.replicates);
            insert.bind(6, m.line);
            insert.exec();
            ++outcome.added;
        }
        transaction.commit();
        return outcome;
    });
}

Result<std::vector<AssayRecord>> AssayBook::assays()
{
    if (const std::string problem = m_impl->maintainersOnlyProblem(kWhatMaintainersDo); !problem.empty())
        return makeError(ErrorCode::Denied, problem);
    return m_impl->guard<std::vector<AssayRecord>>("reading the assays", [&] {
        sql::Statement q(m_impl->db, R"sql(
            SELECT a.name, a.direction, a.task, count(m.id), count(DISTINCT m.tokens), count(DISTINCT i.id)
            FROM assays a LEFT JOIN assay_imports i ON i.assay = a.name
                          LEFT JOIN measurements m ON m.import_id = i.id
            GROUP BY a.name, a.direction, a.task ORDER BY a.name)sql");
        std::vector<AssayRecord> out;
        while (q.executeStep())
            out.push_back({q.getColumn(0).getString(), q.getColumn(1).getString(), q.getColumn(2).getString(),
                           q.getColumn(3).getInt64(), q.getColumn(4).getInt64(), q.getColumn(5).getInt64()});
        return out;
    });
}

Result<std::vector<AssayImportRecord>> AssayBook::assayImports()
{
    if (const std::string problem = m_impl->maintainersOnlyProblem(kWhatMaintainersDo); !problem.empty())
        return makeError(ErrorCode::Denied, problem);
    return m_impl->guard<std::vector<AssayImportRecord>>("reading the measurement imports", [&] {
        sql::Statement q(m_impl->db, R"sql(
            SELECT i.id, i.assay, i.file, i.digest, i.created_at, count(m.id)
            FROM assay_imports i LEFT JOIN measurements m ON m.import_id = i.id
            GROUP BY i.id, i.assay, i.file, i.digest, i.created_at ORDER BY i.id)sql");
        std::vector<AssayImportRecord> out;
        while (q.executeStep())
            out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getString(), q.getColumn(2).getString(),
                           q.getColumn(3).getString(), q.getColumn(4).getString(), q.getColumn(5).getInt64()});
        return out;
    });
}

Result<std::vector<StoredMeasurement>> AssayBook::measurementsOf(const std::string& assay)
{
    if (const std::string problem = m_impl->maintainersOnlyProblem(kWhatMaintainersDo); !problem.empty())
        return makeError(ErrorCode::Denied, problem);
    return m_impl->guard<std::vector<StoredMeasurement>>("reading measurements",
                                                         [&]() -> Result<std::vector<StoredMeasurement>> {
        sql::Database& db = m_impl->db;
        sql::Statement exists(db, "SELECT 1 FROM assays WHERE name = ?");
        exists.bind(1, assay);
        if (!exists.executeStep())
            return makeError(ErrorCode::NotFound, "the store holds no assay named '" + assay + "'");
        sql::Statement q(db, R"sql(
            SELECT m.tokens, m.value, m.sd, m.replicates, m.line, m.import_id
            FROM measurements m JOIN assay_imports i ON i.id = m.import_id
            WHERE i.assay = ? ORDER BY m.id)sql");
        q.bind(1, assay);
        std::vector<StoredMeasurement> out;
        while (q.executeStep()) {
            StoredMeasurement m;
            m.tokens = q.getColumn(0).getString();
            m.value = q.getColumn(1).getDouble();
            if (!q.getColumn(2).isNull())
                m.sd = q.getColumn(2).getDouble();
            m.replicates = q.getColumn(3).getInt64();
            m.line = q.getColumn(4).getInt64();
            m.importId = q.getColumn(5).getInt64();
            out.push_back(std::move(m));
        }
        return out;
    });
}

Result<int64_t> AssayBook::deleteAssayImport(int64_t importId, bool dryRun)
{
    if (const std::string problem = m_impl->maintainersOnlyProblem(kWhatMaintainersDo); !problem.empty())
        return makeError(ErrorCode::Denied, problem);
    return m_impl->guard<int64_t>("deleting measurements", [&]() -> Result<int64_t> {
        sql::Database& db = m_impl->db;
        WriteTransaction transaction(db);
        sql::Statement q(db, "SELECT i.assay, count(m.id) FROM assay_imports i "
                             "LEFT JOIN measurements m ON m.import_id = i.id WHERE i.id = ? GROUP BY i.assay");
        q.bind(1, importId);
        if (!q.executeStep())
            return makeError(ErrorCode::NotFound, "the store holds no measurement import " + std::to_string(importId) +
                                                      " (`d2dpo measurements list` shows them)");
        const std::string assay = q.getColumn(0).getString();
        const int64_t count = q.getColumn(1).getInt64();
        q.exec();
        if (dryRun)
            return count;
        for (const char* sqlText : {"DELETE FROM measurements WHERE import_id = ?", "DELETE FROM assay_imports WHERE id = ?"}) {
            sql::Statement del(db, sqlText);
            del.bind(1, importId);
            del.exec();
        }
        sql::Statement empty(db, "DELETE FROM assays WHERE name = ? AND NOT EXISTS "
                                 "(SELECT 1 FROM assay_imports WHERE assay = ?)");
        empty.bind(1, assay);
        empty.bind(2, assay);
        empty.exec();
        transaction.commit();
        return count;
    });
}

} // namespace d2dpo
