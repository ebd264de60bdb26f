// SPDX-License-Identifier: GPL-3.0-or-later
// PreferenceStore: the models, with their lineage and the configs they were made with.
#include "store/preferencestore.h"

#include "base/config.h"
#include "base/timeutil.h"
#include "store/storeimpl.h"
#include "store/storemodelfiles.h"

namespace d2dpo {

Status ModelCatalog::addModel(const ModelRecord& m)
{
    if (!m.taskKey.empty() && !m.taskSpecJson.empty())
        if (Status s = addTask(m.taskKey, m.taskSpecJson); !s)
            return s;
    return m_impl->guard<Ok>("storing model " + m.id, [&]() -> Result<Ok> {
        WriteTransaction transaction(m_impl->db);
        sql::Statement q(m_impl->db, R"sql(
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
        if (m_impl->team()) // its file goes with it: other machines cannot read this one's path
            storeModelFile(m_impl->db, m.id, m.path);
        transaction.commit();
        return Ok{};
    });
}

namespace {

ModelRecord readModel(sql::Statement& q)
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
    // The task is read back from the spec that names it (the tasks table holds its whole spec).
    if (auto spec = modelSpecFromJson(m.specJson))
        m.taskKey = taskKey(spec->task);
    return m;
}

constexpr const char* kModelSelect = "SELECT id, parent_id, kind, name, path, spec_json, training_json, metrics_json, "
                                     "run_id, created_at FROM models";

} // namespace

Result<std::vector<ModelRecord>> ModelCatalog::models()
{
    return m_impl->guard<std::vector<ModelRecord>>("listing models", [&] {
        sql::Statement q(m_impl->db, std::string(kModelSelect) + " ORDER BY created_at, id");
        std::vector<ModelRecord> out;
        while (q.executeStep())
            out.push_back(readModel(q));
        if (m_impl->team())
            for (ModelRecord& m : out)
                m.path = localModelPath(m_impl->db, m.id, m.path);
        return out;
    });
}

Result<std::optional<ModelRecord>> ModelCatalog::model(const std::string& id)
{
    return m_impl->guard<std::optional<ModelRecord>>("reading model " + id, [&]() -> std::optional<ModelRecord> {
        sql::Statement q(m_impl->db, std::string(kModelSelect) + " WHERE id = ?");
        q.bind(1, id);
        if (!q.executeStep())
            return std::nullopt;
        ModelRecord m = readModel(q);
        if (m_impl->team())
            m.path = localModelPath(m_impl->db, m.id, m.path);
        return m;
    });
}

Status ModelCatalog::addTask(const std::string& key, const std::string& specJson)
{
    return m_impl->guard<Ok>("storing task " + key, [&]() -> Result<Ok> {
        sql::Statement q(m_impl->db, "INSERT INTO tasks (key, spec_json, created_at) VALUES (?, ?, ?) "
                                     "ON CONFLICT (key) DO NOTHING");
        q.bind(1, key);
        q.bind(2, specJson);
        q.bind(3, utcNow());
        q.exec();
        return Ok{};
    });
}

Result<std::optional<std::string>> ModelCatalog::taskSpec(const std::string& key)
{
    return m_impl->guard<std::optional<std::string>>("reading task " + key, [&]() -> std::optional<std::string> {
        sql::Statement q(m_impl->db, "SELECT spec_json FROM tasks WHERE key = ?");
        q.bind(1, key);
        if (!q.executeStep())
            return std::nullopt;
        return q.getColumn(0).getString();
    });
}

Status ModelCatalog::renameModel(const std::string& id, const std::string& name)
{
    if (name.empty())
        return makeError("a model's name cannot be empty");
    return m_impl->guard<Ok>("renaming model " + id, [&]() -> Ok {
        sql::Statement q(m_impl->db, "UPDATE models SET name = ? WHERE id = ?");
        q.bind(1, name);
        q.bind(2, id);
        if (q.exec() != 1)
            throw sql::Error(sql::ErrorKind::Other, "no model " + id + " in the store");
        return Ok{};
    });
}

Result<int64_t> ModelCatalog::modelChildren(const std::string& id)
{
    return m_impl->guard<int64_t>("counting a model's descendants", [&] {
        sql::Statement q(m_impl->db, "SELECT count(*) FROM models WHERE parent_id = ?");
        q.bind(1, id);
        q.executeStep();
        return q.getColumn(0).getInt64();
    });
}

Status ModelCatalog::deleteModel(const std::string& id)
{
    auto children = modelChildren(id);
    if (!children)
        return makeError(children.errorCode(), children.error());
    if (children.value() > 0)
        return makeError(std::to_string(children.value()) + " models were fine-tuned from it; delete them first "
                                                              "(their lineage would point nowhere)");
    return m_impl->guard<Ok>("deleting model " + id, [&]() -> Ok {
        sql::WriteTransaction transaction(m_impl->db);
        // Its sequences and their labels stay (they are the experts' work); they no longer name it.
        for (const char* sql : {"DELETE FROM evaluations WHERE model_id = ?1",
                                "UPDATE sequences SET model_id = NULL WHERE model_id = ?1",
                                "UPDATE runs SET reference_model_id = NULL WHERE reference_model_id = ?1",
                                "UPDATE runs SET result_model_id = NULL WHERE result_model_id = ?1"}) {
            sql::Statement q(m_impl->db, sql);
            q.bind(1, id);
            q.exec();
        }
        sql::Statement q(m_impl->db, "DELETE FROM models WHERE id = ?");
        q.bind(1, id);
        if (q.exec() != 1)
            throw sql::Error(sql::ErrorKind::Other, "no model " + id + " in the store");
        transaction.commit();
        return Ok{};
    });
}

Result<std::optional<std::string>> ModelCatalog::evaluation(const std::string& modelId, const std::string& sampler,
                                                            int64_t samples, uint64_t seed)
{
    return m_impl->guard<std::optional<std::string>>("reading an evaluation", [&] {
        sql::Statement q(m_impl->db, "SELECT metrics_json FROM evaluations WHERE model_id = ? AND sampler = ? "
                                        "AND samples = ? AND seed = ?");
        q.bind(1, modelId);
        q.bind(2, sampler);
        q.bind(3, samples);
        q.bind(4, int64_t(seed));
        return q.executeStep() ? std::optional(q.getColumn(0).getString()) : std::nullopt;
    });
}

Status ModelCatalog::saveEvaluation(const std::string& modelId, const std::string& sampler, int64_t samples,
                                    uint64_t seed, const std::string& metricsJson)
{
    return m_impl->guard<Ok>("recording an evaluation", [&]() -> Ok {
        sql::Statement q(m_impl->db, "INSERT INTO evaluations (model_id, sampler, samples, seed, metrics_json, "
                                     "created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (model_id, sampler, samples, "
                                     "seed) DO UPDATE SET metrics_json = excluded.metrics_json, "
                                     "created_at = excluded.created_at");
        q.bind(1, modelId);
        q.bind(2, sampler);
        q.bind(3, samples);
        q.bind(4, int64_t(seed));
        q.bind(5, metricsJson);
        q.bind(6, utcNow());
        q.exec();
        return Ok{};
    });
}

} // namespace d2dpo
