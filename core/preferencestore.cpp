#include "preferencestore.h"

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include "storeschema.h"
#include "timeutil.h"

namespace d2dpo {

namespace fs = std::filesystem;

namespace {

constexpr int kApplicationId = 0x44324450; // "D2DP": marks the file as a d2dpo-studio store

std::string nullableText(const SQLite::Column& column) { return column.isNull() ? std::string() : column.getString(); }

void bindOptionalText(SQLite::Statement& statement, int index, const std::string& text)
{
    if (text.empty())
        statement.bind(index); // NULL
    else
        statement.bind(index, text);
}

ShownPair readPair(SQLite::Statement& q)
{
    return {q.getColumn(0).getInt64(), q.getColumn(1).getString(), q.getColumn(2).getString(),
            nullableText(q.getColumn(3)), nullableText(q.getColumn(4))};
}

constexpr const char* kPairSelect = R"sql(
    SELECT p.id, ls.tokens, rs.tokens, ls.model_id, rs.model_id
    FROM pairs p JOIN sequences ls ON ls.id = p.left_id JOIN sequences rs ON rs.id = p.right_id)sql";

} // namespace

const char* toString(Choice choice)
{
    switch (choice) {
    case Choice::Left:
        return "left";
    case Choice::Right:
        return "right";
    case Choice::Tie:
        return "tie";
    case Choice::Skip:
        return "skip";
    }
    return "skip";
}

std::optional<Choice> choiceFromString(const std::string& text)
{
    for (Choice c : {Choice::Left, Choice::Right, Choice::Tie, Choice::Skip})
        if (text == toString(c))
            return c;
    return std::nullopt;
}

struct PreferenceStore::Impl {
    std::string path;
    SQLite::Database db;
    int version = 0;

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

PreferenceStore::PreferenceStore(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
PreferenceStore::~PreferenceStore() = default;

const std::string& PreferenceStore::path() const { return m_impl->path; }
int PreferenceStore::schemaVersion() const { return m_impl->version; }

std::string PreferenceStore::defaultPath()
{
    fs::path base;
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
        base = xdg;
    else if (const char* home = std::getenv("HOME"); home && *home)
        base = fs::path(home) / ".local" / "share";
    else
        base = fs::current_path();
    return (base / "d2dpo-studio" / "preferences.sqlite").string();
}

Result<std::unique_ptr<PreferenceStore>> PreferenceStore::open(const std::string& path)
{
    const std::string where = "preference store '" + path + "': ";
    std::error_code ec;
    const bool existed = fs::exists(path, ec);
    if (existed && !fs::is_regular_file(path, ec))
        return makeError(where + "not a regular file");
    // The file's own mode counts even for root (who may write anything): a store marked
    // read-only is treated as read-only.
    const bool ownerWritable =
        !existed || (fs::status(path, ec).permissions() & fs::perms::owner_write) != fs::perms::none;
    if (existed && (!ownerWritable || access(path.c_str(), W_OK) != 0))
        return makeError(where + "the file is read-only; nothing was changed (fix its permissions or choose "
                                 "another store with --db)");
    if (!existed) {
        const fs::path parent = fs::path(path).parent_path();
        if (!parent.empty())
            fs::create_directories(parent, ec);
        if (ec)
            return makeError(where + "cannot create its folder: " + ec.message());
    }
    std::unique_ptr<Impl> impl;
    try {
        impl = std::make_unique<Impl>(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
        SQLite::Database& db = impl->db;
        db.setBusyTimeout(5000);
        // Read-only checks first: nothing is written to a file we are going to refuse.
        int version = 0;
        int applicationId = 0;
        try {
            version = db.execAndGet("PRAGMA user_version").getInt();
            applicationId = db.execAndGet("PRAGMA application_id").getInt();
        } catch (const SQLite::Exception& e) {
            return makeError(where + "not an SQLite database (" + e.what() + "); nothing was changed");
        }
        const int tables = db.execAndGet("SELECT count(*) FROM sqlite_master").getInt();
        if (applicationId != kApplicationId && (applicationId != 0 || tables > 0))
            return makeError(where + "an SQLite database of another application; nothing was changed");
        if (version > kSchemaVersion)
            return makeError(where + "written by a newer d2dpo-studio (schema " + std::to_string(version) +
                             ", this build knows up to " + std::to_string(kSchemaVersion) +
                             "); nothing was changed");
        if (tables > 0) {
            const std::string check = db.execAndGet("PRAGMA quick_check").getString();
            if (check != "ok")
                return makeError(where + "the database is corrupt (" + check.substr(0, 200) +
                                 "); nothing was changed. Restore a backup or start a new store with --db");
        }
        if (sqlite3_db_readonly(db.getHandle(), "main") == 1)
            return makeError(where + "opened read-only; nothing was changed");

        db.exec("PRAGMA foreign_keys = ON");
        db.exec("PRAGMA journal_mode = WAL");
        // Each label is one transaction; FULL makes it durable past a crash of the machine too,
        // not only of the application.
        db.exec("PRAGMA synchronous = FULL");
        const auto& migrations = storeMigrations();
        for (int v = version; v < int(migrations.size()); ++v) {
            SQLite::Transaction transaction(db);
            db.exec(migrations[size_t(v)]);
            db.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
            db.exec("PRAGMA user_version = " + std::to_string(v + 1));
            transaction.commit();
        }
        impl->version = db.execAndGet("PRAGMA user_version").getInt();
    } catch (const SQLite::Exception& e) {
        std::string message = e.what();
        if (message.find("readonly") != std::string::npos || message.find("read-only") != std::string::npos)
            return makeError(where + "cannot write to it (read-only file or folder); nothing was changed");
        return makeError(where + "cannot open it: " + message);
    }
    return std::unique_ptr<PreferenceStore>(new PreferenceStore(std::move(impl)));
}

Status PreferenceStore::addModel(const ModelRecord& m)
{
    return m_impl->guard<Ok>("storing model " + m.id, [&]() -> Result<Ok> {
        SQLite::Statement q(m_impl->db, R"sql(
            INSERT INTO models (id, parent_id, kind, name, path, spec_json, training_json, metrics_json, run_id,
                                created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET name = excluded.name, path = excluded.path,
                metrics_json = excluded.metrics_json, run_id = excluded.run_id)sql");
        q.bind(1, m.id);
        bindOptionalText(q, 2, m.parentId);
        q.bind(3, m.kind);
        q.bind(4, m.name);
        q.bind(5, m.path);
        q.bind(6, m.specJson);
        q.bind(7, m.trainingJson);
        q.bind(8, m.metricsJson);
        if (m.runId)
            q.bind(9, *m.runId);
        q.bind(10, m.createdAt.empty() ? utcNow() : m.createdAt);
        q.exec();
        return Ok{};
    });
}

namespace {

ModelRecord readModel(SQLite::Statement& q)
{
    ModelRecord m;
    m.id = q.getColumn(0).getString();
    m.parentId = nullableText(q.getColumn(1));
    m.kind = q.getColumn(2).getString();
    m.name = q.getColumn(3).getString();
    m.path = q.getColumn(4).getString();
    m.specJson = q.getColumn(5).getString();
    m.trainingJson = q.getColumn(6).getString();
    m.metricsJson = q.getColumn(7).getString();
    if (!q.getColumn(8).isNull())
        m.runId = q.getColumn(8).getInt64();
    m.createdAt = q.getColumn(9).getString();
    return m;
}

constexpr const char* kModelSelect = "SELECT id, parent_id, kind, name, path, spec_json, training_json, metrics_json, "
                                     "run_id, created_at FROM models";

} // namespace

Result<std::vector<ModelRecord>> PreferenceStore::models()
{
    return m_impl->guard<std::vector<ModelRecord>>("listing models", [&] {
        SQLite::Statement q(m_impl->db, std::string(kModelSelect) + " ORDER BY created_at, id");
        std::vector<ModelRecord> out;
        while (q.executeStep())
            out.push_back(readModel(q));
        return out;
    });
}

Result<std::optional<ModelRecord>> PreferenceStore::model(const std::string& id)
{
    return m_impl->guard<std::optional<ModelRecord>>("reading model " + id, [&]() -> std::optional<ModelRecord> {
        SQLite::Statement q(m_impl->db, std::string(kModelSelect) + " WHERE id = ?");
        q.bind(1, id);
        if (!q.executeStep())
            return std::nullopt;
        return readModel(q);
    });
}

Result<std::vector<int64_t>> PreferenceStore::addPairs(const std::vector<ShownPair>& pairs, const std::string& source)
{
    for (const ShownPair& p : pairs)
        if (p.left == p.right)
            return makeError("a pair of two identical sequences is not shown (" + p.left + ")");
    return m_impl->guard<std::vector<int64_t>>("storing pairs", [&] {
        SQLite::Database& db = m_impl->db;
        SQLite::Transaction transaction(db);
        SQLite::Statement sequence(db, "INSERT INTO sequences (model_id, tokens, created_at) VALUES (?, ?, ?)");
        SQLite::Statement pair(db, "INSERT INTO pairs (left_id, right_id, source, created_at) VALUES (?, ?, ?, ?)");
        const std::string now = utcNow();
        auto addSequence = [&](const std::string& tokens, const std::string& modelId) {
            sequence.reset();
            bindOptionalText(sequence, 1, modelId);
            sequence.bind(2, tokens);
            sequence.bind(3, now);
            sequence.exec();
            return db.getLastInsertRowid();
        };
        std::vector<int64_t> ids;
        for (const ShownPair& p : pairs) {
            const int64_t left = addSequence(p.left, p.leftModelId);
            const int64_t right = addSequence(p.right, p.rightModelId);
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

Result<std::vector<ShownPair>> PreferenceStore::pendingPairs(int64_t limit)
{
    return m_impl->guard<std::vector<ShownPair>>("reading pending pairs", [&] {
        SQLite::Statement q(m_impl->db, std::string(kPairSelect) + R"sql(
            WHERE NOT EXISTS (SELECT 1 FROM labels l WHERE l.pair_id = p.id AND l.undone_at IS NULL)
            ORDER BY p.id LIMIT ?)sql");
        q.bind(1, limit);
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
    if (labeler.empty())
        return makeError("a label needs the labeler's name");
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
        const std::string message = e.what();
        if (message.find("UNIQUE") != std::string::npos)
            return makeError("pair " + std::to_string(pairId) + " already has a label");
        if (message.find("FOREIGN KEY") != std::string::npos)
            return makeError("pair " + std::to_string(pairId) + " does not exist");
        return makeError("storing the label failed in '" + m_impl->path + "': " + message);
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
    using Row = std::pair<ShownPair, LabelRecord>;
    return m_impl->guard<std::vector<Row>>("reading labels", [&] {
        // The pair's columns as kPairSelect has them, then the label's.
        SQLite::Statement full(m_impl->db, R"sql(
            SELECT p.id, ls.tokens, rs.tokens, ls.model_id, rs.model_id,
                   l.id, l.choice, l.decide_ms, l.created_at
            FROM labels l JOIN pairs p ON p.id = l.pair_id
                 JOIN sequences ls ON ls.id = p.left_id JOIN sequences rs ON rs.id = p.right_id
            WHERE l.undone_at IS NULL AND l.labeler = ? ORDER BY l.id)sql");
        full.bind(1, labeler);
        std::vector<Row> out;
        while (full.executeStep()) {
            LabelRecord label{full.getColumn(5).getInt64(), full.getColumn(0).getInt64(),
                              choiceFromString(full.getColumn(6).getString()).value_or(Choice::Skip), labeler,
                              full.getColumn(7).getInt64(), full.getColumn(8).getString(), false};
            out.emplace_back(readPair(full), label);
        }
        return out;
    });
}

Result<std::vector<PreferenceRecord>> PreferenceStore::preferences()
{
    return m_impl->guard<std::vector<PreferenceRecord>>("reading preferences", [&] {
        SQLite::Statement q(m_impl->db, R"sql(
            SELECT l.choice, ls.tokens, rs.tokens, ls.model_id, rs.model_id, l.labeler, l.decide_ms, l.created_at
            FROM labels l JOIN pairs p ON p.id = l.pair_id
                 JOIN sequences ls ON ls.id = p.left_id JOIN sequences rs ON rs.id = p.right_id
            WHERE l.undone_at IS NULL AND l.choice IN ('left', 'right') ORDER BY l.id)sql");
        std::vector<PreferenceRecord> out;
        while (q.executeStep()) {
            const bool left = q.getColumn(0).getString() == "left";
            const std::string l = q.getColumn(1).getString(), r = q.getColumn(2).getString();
            const std::string lm = nullableText(q.getColumn(3)), rm = nullableText(q.getColumn(4));
            out.push_back({left ? l : r, left ? r : l, left ? lm : rm, left ? rm : lm, left ? "left" : "right",
                           q.getColumn(5).getString(), q.getColumn(6).getInt64(), q.getColumn(7).getString()});
        }
        return out;
    });
}

Status PreferenceStore::importPreferences(const std::vector<PreferenceRecord>& records)
{
    return m_impl->guard<Ok>("importing preferences", [&] {
        SQLite::Database& db = m_impl->db;
        SQLite::Transaction transaction(db);
        // A model id only links when that model is in this store (lineage may come from elsewhere).
        SQLite::Statement sequence(db, "INSERT INTO sequences (model_id, tokens, created_at) "
                                       "VALUES ((SELECT id FROM models WHERE id = ?), ?, ?)");
        SQLite::Statement pair(db, "INSERT INTO pairs (left_id, right_id, source, created_at) "
                                   "VALUES (?, ?, 'imported', ?)");
        SQLite::Statement label(db, "INSERT INTO labels (pair_id, choice, labeler, decide_ms, created_at) "
                                    "VALUES (?, ?, ?, ?, ?)");
        const std::string now = utcNow();
        auto addSequence = [&](const std::string& tokens, const std::string& modelId) {
            sequence.reset();
            sequence.bind(1, modelId);
            sequence.bind(2, tokens);
            sequence.bind(3, now);
            sequence.exec();
            return db.getLastInsertRowid();
        };
        for (const PreferenceRecord& r : records) {
            const bool chosenLeft = r.chosenSide != "right";
            const int64_t chosen = addSequence(r.chosen, r.chosenModelId);
            const int64_t rejected = addSequence(r.rejected, r.rejectedModelId);
            pair.reset();
            pair.bind(1, chosenLeft ? chosen : rejected);
            pair.bind(2, chosenLeft ? rejected : chosen);
            pair.bind(3, now);
            pair.exec();
            label.reset();
            label.bind(1, db.getLastInsertRowid());
            label.bind(2, chosenLeft ? "left" : "right");
            label.bind(3, r.labeler.empty() ? std::string("import") : r.labeler);
            label.bind(4, std::max<int64_t>(0, r.decideMs));
            label.bind(5, r.labelledAt.empty() ? now : r.labelledAt);
            label.exec();
        }
        transaction.commit();
        return Ok{};
    });
}

Result<int64_t> PreferenceStore::startRun(const RunRecord& run)
{
    return m_impl->guard<int64_t>("recording the run", [&] {
        SQLite::Statement q(m_impl->db, "INSERT INTO runs (kind, reference_model_id, config_json, device, status, "
                                        "started_at) VALUES (?, ?, ?, ?, 'running', ?)");
        q.bind(1, run.kind);
        bindOptionalText(q, 2, run.referenceModelId);
        q.bind(3, run.configJson);
        q.bind(4, run.device);
        q.bind(5, run.startedAt.empty() ? utcNow() : run.startedAt);
        q.exec();
        return m_impl->db.getLastInsertRowid();
    });
}

Status PreferenceStore::appendMetrics(int64_t runId, int64_t step, const std::map<std::string, double>& values)
{
    return m_impl->guard<Ok>("recording metrics", [&] {
        SQLite::Transaction transaction(m_impl->db);
        SQLite::Statement q(m_impl->db,
                            "INSERT OR REPLACE INTO run_metrics (run_id, name, step, value) VALUES (?, ?, ?, ?)");
        for (const auto& [name, value] : values) {
            q.reset();
            q.bind(1, runId);
            q.bind(2, name);
            q.bind(3, step);
            q.bind(4, value);
            q.exec();
        }
        transaction.commit();
        return Ok{};
    });
}

Status PreferenceStore::appendMetrics(int64_t runId, const std::vector<MetricPoint>& points)
{
    return m_impl->guard<Ok>("recording metrics", [&] {
        SQLite::Transaction transaction(m_impl->db);
        SQLite::Statement q(m_impl->db,
                            "INSERT OR REPLACE INTO run_metrics (run_id, name, step, value) VALUES (?, ?, ?, ?)");
        for (const MetricPoint& point : points) {
            q.reset();
            q.bind(1, runId);
            q.bind(2, point.name);
            q.bind(3, point.step);
            q.bind(4, point.value);
            q.exec();
        }
        transaction.commit();
        return Ok{};
    });
}

Status PreferenceStore::finishRun(int64_t runId, const std::string& status, const std::string& error,
                                  const std::string& resultModelId)
{
    return m_impl->guard<Ok>("finishing the run", [&] {
        SQLite::Statement q(m_impl->db, "UPDATE runs SET status = ?, error = ?, result_model_id = ?, finished_at = ? "
                                        "WHERE id = ?");
        q.bind(1, status);
        q.bind(2, error);
        bindOptionalText(q, 3, resultModelId);
        q.bind(4, utcNow());
        q.bind(5, runId);
        q.exec();
        return Ok{};
    });
}

namespace {

constexpr const char* kRunColumns = "SELECT id, kind, reference_model_id, result_model_id, config_json, device, "
                                    "status, error, started_at, finished_at FROM runs ";

RunRecord readRun(SQLite::Statement& q)
{
    return {q.getColumn(0).getInt64(), q.getColumn(1).getString(), nullableText(q.getColumn(2)),
            nullableText(q.getColumn(3)), q.getColumn(4).getString(), q.getColumn(5).getString(),
            q.getColumn(6).getString(), q.getColumn(7).getString(), q.getColumn(8).getString(),
            q.getColumn(9).getString()};
}

} // namespace

Result<std::vector<RunRecord>> PreferenceStore::runs()
{
    return m_impl->guard<std::vector<RunRecord>>("listing runs", [&] {
        SQLite::Statement q(m_impl->db, std::string(kRunColumns) + "ORDER BY id");
        std::vector<RunRecord> out;
        while (q.executeStep())
            out.push_back(readRun(q));
        return out;
    });
}

Result<std::optional<RunRecord>> PreferenceStore::run(int64_t id)
{
    return m_impl->guard<std::optional<RunRecord>>("reading a run", [&]() -> std::optional<RunRecord> {
        SQLite::Statement q(m_impl->db, std::string(kRunColumns) + "WHERE id = ?");
        q.bind(1, id);
        if (!q.executeStep())
            return std::nullopt;
        return readRun(q);
    });
}

Result<std::vector<std::pair<int64_t, double>>> PreferenceStore::metricSeries(int64_t runId, const std::string& name)
{
    return m_impl->guard<std::vector<std::pair<int64_t, double>>>("reading metrics", [&] {
        SQLite::Statement q(m_impl->db,
                            "SELECT step, value FROM run_metrics WHERE run_id = ? AND name = ? ORDER BY step");
        q.bind(1, runId);
        q.bind(2, name);
        std::vector<std::pair<int64_t, double>> out;
        while (q.executeStep())
            out.emplace_back(q.getColumn(0).getInt64(), q.getColumn(1).getDouble());
        return out;
    });
}

Result<std::string> PreferenceStore::integrityCheck()
{
    return m_impl->guard<std::string>("checking integrity",
                                      [&] { return m_impl->db.execAndGet("PRAGMA integrity_check").getString(); });
}

} // namespace d2dpo
