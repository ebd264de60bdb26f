// SPDX-License-Identifier: GPL-3.0-or-later
#include "facades/taskinfo.h"

#include <map>
#include <mutex>
#include <tuple>

#include <nlohmann/json.hpp>

#include "base/failurereport.h"
#include "io/checkpoint.h"
#include "model/device.h"
#include "tasks/sequencefile.h"
#include "tasks/task.h"

namespace d2dpo {

Result<SequenceFileTask> readDataFile(const std::string& path, const SequenceFileOptions& options)
{
    return readSequenceFile(path, options);
}

TaskInfo::TaskInfo(std::shared_ptr<const Task> task) : m_task(std::move(task)) {}

Result<TaskInfo> TaskInfo::fromConfig(const TaskConfig& config, const std::string& rule)
{
    try {
        auto task = makeTask(withRule(config, rule));
        if (!task)
            return makeError(task.error());
        return TaskInfo(std::shared_ptr<const Task>(std::move(task.value())));
    } catch (const std::exception& e) {
        return makeError("cannot make the task: " + userMessage(e));
    }
}

Result<TaskInfo> TaskInfo::fromCheckpoint(const std::string& path, const std::string& rule)
{
    auto loaded = loadCheckpoint(path, torch::kCPU);
    if (!loaded)
        return makeError(loaded.error());
    return fromConfig(loaded->info.spec.task, rule);
}

Result<TaskInfo> TaskInfo::ofModel(PreferenceStore& store, const ModelRecord& model, const std::string& rule)
{
    if (model.taskKey.empty())
        return makeError("the store's record of model " + model.id + " names no task (its spec cannot be read)");
    return fromStore(store, model.taskKey, rule);
}

namespace {

/// The tasks read from stores, by store, key and rule. A store keeps the first spec recorded under
/// a key for good (addTask) and the key hashes the spec's symbols, lengths, validity and data, so a
/// task read once need not be read and parsed again: the views ask at every selection, and a team
/// store's read is a round trip to its server.
class StoredTaskCache {
public:
    std::shared_ptr<const Task> find(const std::string& store, const std::string& key, const std::string& rule)
    {
        const std::lock_guard lock(m_mutex);
        const auto found = m_tasks.find({store, key, rule});
        return found == m_tasks.end() ? nullptr : found->second;
    }
    void add(const std::string& store, const std::string& key, const std::string& rule, std::shared_ptr<const Task> task)
    {
        const std::lock_guard lock(m_mutex);
        m_tasks.emplace(std::tuple{store, key, rule}, std::move(task));
    }

private:
    std::mutex m_mutex;
    std::map<std::tuple<std::string, std::string, std::string>, std::shared_ptr<const Task>> m_tasks;
};

StoredTaskCache& storedTasks()
{
    static StoredTaskCache cache;
    return cache;
}

} // namespace

Result<TaskInfo> TaskInfo::fromStore(PreferenceStore& store, const std::string& key, const std::string& rule)
{
    const std::string storeName = store.displayName();
    if (auto known = storedTasks().find(storeName, key, rule))
        return TaskInfo(std::move(known));
    auto read = readFromStore(store, key, rule);
    if (read)
        storedTasks().add(storeName, key, rule, read->m_task);
    return read;
}

Result<TaskInfo> TaskInfo::readFromStore(PreferenceStore& store, const std::string& key, const std::string& rule)
{
    auto spec = store.taskSpec(key);
    if (!spec)
        return makeError(spec.error());
    if (!spec->has_value()) {
        // A binary-integers task is whole in its key (a store may hold its pairs without a model).
        const std::string prefix = "binary-integers:";
        if (key.rfind(prefix, 0) == 0 && key.size() > prefix.size() &&
            key.find_first_not_of("0123456789", prefix.size()) == std::string::npos && key.size() < prefix.size() + 4) {
            TaskConfig binary;
            binary.length = std::stoi(key.substr(prefix.size()));
            return fromConfig(binary, rule);
        }
        return makeError("the store does not know the task " + key);
    }
    try {
        return fromConfig(taskConfigFromJson(nlohmann::json::parse(*spec.value())), rule);
    } catch (const nlohmann::json::exception& e) {
        return makeError("the store's copy of the task " + key + " is malformed: " + e.what());
    }
}

const TaskConfig& TaskInfo::config() const { return m_task->config(); }
std::string TaskInfo::key() const { return m_task->key(); }

Status TaskInfo::recordIn(PreferenceStore& store) const
{
    return store.addTask(key(), taskConfigToJson(config()).dump());
}

std::string TaskInfo::summary() const
{
    const TaskConfig& c = config();
    if (c.name == "binary-integers")
        return "binary-integers, length " + std::to_string(c.length);
    const std::string shape = std::to_string(c.symbols.size()) + " symbols, lengths " + std::to_string(c.minLength) +
                              ".." + std::to_string(c.length);
    if (c.data.empty() && c.key.empty())
        return "sequences without training data (an imported model's): " + shape;
    return "sequences from " + (c.source.empty() ? std::string("a file") : c.source) + ": " + shape + ", " +
           std::to_string(c.data.size()) + " training sequences";
}

std::string TaskInfo::alphabet() const
{
    const std::string& symbols = m_task->vocabulary().symbols();
    const auto within = [&](const std::string& set) { return symbols.find_first_not_of(set) == std::string::npos; };
    if (config().name == "binary-integers")
        return "binary";
    if (within("ACGTN"))
        return "dna";
    if (within("ACGUN"))
        return "rna";
    if (within("ACDEFGHIKLMNPQRSTVWYXBZUO"))
        return "protein";
    return "text";
}

std::string TaskInfo::symbols() const { return m_task->vocabulary().symbols(); }

std::vector<std::string> TaskInfo::trainingTexts(int64_t count, uint64_t seed) const
{
    if (!config().data.empty())
        return config().data;
    try {
        auto generator = makeGenerator(seed, torch::kCPU);
        return formatRows(*m_task, m_task->sampleData(count, generator, torch::kCPU));
    } catch (const std::exception&) {
        return {}; // a task without data to draw from (an imported model's)
    }
}

bool TaskInfo::hasRule() const { return m_task->rule() != nullptr; }
std::string TaskInfo::ruleSpec() const { return hasRule() ? m_task->rule()->spec() : std::string(); }
std::string TaskInfo::ruleDescription() const { return hasRule() ? m_task->rule()->describe() : std::string(); }
std::string TaskInfo::simulatedExpertName() const { return "rule:" + ruleSpec(); }

Result<Choice> TaskInfo::ruleChoice(const std::string& left, const std::string& right) const
{
    return m_task->ruleChoice(left, right);
}

std::vector<std::pair<int, int>> TaskInfo::ruleMatches(const std::string& text) const
{
    return hasRule() ? m_task->rule()->matches(text) : std::vector<std::pair<int, int>>{};
}

SequenceHint TaskInfo::hint(const std::string& text) const
{
    auto tokens = m_task->parse(text);
    if (!tokens)
        return {false, "not a sequence of this task", ""};
    return m_task->hint(tokens.value());
}

Status TaskInfo::check(const std::string& text) const
{
    auto tokens = m_task->parse(text);
    if (!tokens)
        return makeError(tokens.error());
    return Ok{};
}

std::string TaskInfo::knownRules() { return describeKnownRules(); }

SampleMetrics TaskInfo::declaredMetrics() const { return m_task->measureRows({}, 0); }

} // namespace d2dpo
