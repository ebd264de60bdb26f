// SPDX-License-Identifier: GPL-3.0-or-later
// PreferenceStore::copyAll: a whole store from one engine to the other (`d2dpo store copy`), as
// one transaction on the target, read from one snapshot of the source, with every id kept so
// that lineage, pairs and labels still point where they did.
#include "store/preferencestore.h"

#include "store/storeimpl.h"

namespace d2dpo {

namespace {

struct Table {
    const char* name;
    const char* columns;
    const char* order;
    bool identity; ///< its id is a PostgreSQL identity, moved past the copied ids afterwards
    int blob = -1; ///< the column holding bytes (a checkpoint), copied as they are
};

// In an order that satisfies every reference: models first without their run (runs refer to
// models and models to runs), the run set once the runs are in.
const Table kTables[] = {
    {"tasks", "key, spec_json, created_at", "key", false},
    {"models", "id, parent_id, kind, name, path, spec_json, training_json, metrics_json, NULL, created_at",
     "created_at, id", false},
    {"runs", "id, kind, reference_model_id, result_model_id, config_json, device, status, error, started_at, "
             "finished_at, lock_path",
     "id", true},
    {"run_metrics", "run_id, name, step, value", "run_id, name, step", false},
    {"evaluations", "model_id, sampler, samples, seed, metrics_json, created_at", "model_id, sampler, samples, seed",
     false},
    {"imports", "id, file, task, created_at", "id", true},
    {"comparisons", "id, task, models_json, created_at", "id", true},
    {"sequences", "id, model_id, tokens, created_at, task, made_by", "id", true},
    {"pairs", "id, left_id, right_id, source, created_at, import_id, purpose, gold_choice, comparison_id, margin, "
              "margin_model",
     "id", true},
    {"labels", "id, pair_id, choice, labeler, decide_ms, created_at, undone_at, import_key", "id", true},
    {"settings", "key, value", "key", false},
    {"model_files", "model_id, bytes, size, created_at", "model_id", false, 1},
    {"assays", "name, direction, task, created_at", "name", false},
    {"assay_imports", "id, assay, file, digest, created_at", "id", true},
    {"measurements", "id, import_id, tokens, value, sd, replicates, line", "id", true},
};

std::string insertColumns(const char* columns)
{
    std::string out = columns;
    const std::string placeholder = "NULL"; // models' run_id, copied after the runs
    if (const size_t at = out.find(placeholder); at != std::string::npos)
        out.replace(at, placeholder.size(), "run_id");
    return out;
}

int columnCount(const char* columns)
{
    int count = 1;
    for (const char* c = columns; *c; ++c)
        count += *c == ',';
    return count;
}

int64_t countOf(sql::Database& db, const char* table)
{
    return db.execAndGet(std::string("SELECT count(*) FROM ") + table).getInt64();
}

} // namespace

Result<std::vector<std::pair<std::string, int64_t>>> PreferenceStore::copyAll(PreferenceStore& from, PreferenceStore& to)
{
    using Counts = std::vector<std::pair<std::string, int64_t>>;
    if (from.schemaVersion() != to.schemaVersion())
        return makeError("the stores are at different schema versions (" + std::to_string(from.schemaVersion()) +
                         " and " + std::to_string(to.schemaVersion()) + "): open both with this build first");
    sql::Database& source = from.m_own->db;
    sql::Database& target = to.m_own->db;
    try {
        for (const Table& table : kTables)
            if (countOf(target, table.name) != 0)
                return makeError("the target store '" + to.displayName() + "' is not empty (it has " + table.name +
                                 "); a copy goes only into a new store, and nothing was copied");
        // One snapshot of the source: a labeler writing meanwhile changes nothing of what is copied.
        source.exec(source.engine() == sql::Engine::PostgreSQL ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
                                                               : "BEGIN");
        struct EndRead {
            sql::Database& db;
            ~EndRead()
            {
                try {
                    db.exec("ROLLBACK");
                } catch (const sql::Error&) {
                }
            }
        } endRead{source};
        WriteTransaction transaction(target);
        Counts counts;
        for (const Table& table : kTables) {
            const int columns = columnCount(table.columns);
            std::string placeholders;
            for (int i = 0; i < columns; ++i)
                placeholders += i ? ", ?" : "?";
            sql::Statement read(source, std::string("SELECT ") + table.columns + " FROM " + table.name + " ORDER BY " +
                                            table.order);
            sql::Statement write(target, std::string("INSERT INTO ") + table.name + " (" +
                                             insertColumns(table.columns) + ") VALUES (" + placeholders + ")");
            int64_t copied = 0;
            while (read.executeStep()) {
                write.reset();
                for (int i = 0; i < columns; ++i)
                    if (i == table.blob)
                        write.bindBlob(i + 1, read.getBlob(i));
                    else
                        write.bind(i + 1, read.getColumn(i));
                write.exec();
                ++copied;
            }
            const int64_t expected = countOf(source, table.name);
            if (copied != expected || countOf(target, table.name) != expected)
                return makeError(std::string("copying ") + table.name + " gave " + std::to_string(copied) + " of " +
                                 std::to_string(expected) + " rows; nothing was copied");
            counts.emplace_back(table.name, copied);
            if (table.identity && target.engine() == sql::Engine::PostgreSQL)
                target.exec(std::string("SELECT setval(pg_get_serial_sequence('") + table.name + "', 'id'), " +
                            "coalesce(max(id), 0) + 1, false) FROM " + table.name);
        }
        sql::Statement runOf(source, "SELECT id, run_id FROM models WHERE run_id IS NOT NULL");
        sql::Statement setRun(target, "UPDATE models SET run_id = ? WHERE id = ?");
        while (runOf.executeStep()) {
            setRun.reset();
            setRun.bind(1, runOf.getColumn(1));
            setRun.bind(2, runOf.getColumn(0));
            setRun.exec();
        }
        transaction.commit();
        return counts;
    } catch (const sql::Error& e) {
        return makeError(StoreImpl::errorCodeOf(e), "copying '" + from.displayName() + "' to '" + to.displayName() +
                                                        "' failed, and nothing was copied: " + e.what());
    }
}

} // namespace d2dpo
