// SPDX-License-Identifier: GPL-3.0-or-later
#include "labeling/taskcatalog.h"

namespace d2dpo {

const TaskInfo* TaskCatalog::find(const std::string& key)
{
    auto known = m_tasks.find(key);
    if (known == m_tasks.end()) {
        if (!m_readsStore) {
            m_lastError = "the task '" + key + "' has not been read yet";
            return nullptr;
        }
        if (auto failed = m_failures.find(key); failed != m_failures.end()) {
            m_lastError = failed->second;
            return nullptr;
        }
        auto task = TaskInfo::fromStore(m_store, key, m_ruleOverride);
        if (!task) {
            m_lastError = task.error();
            // Kept only when the store answered that it lacks the task; a failed read is asked again.
            if (task.error().rfind("the store does not know the task", 0) == 0)
                m_failures.insert_or_assign(key, task.error());
            return nullptr;
        }
        known = m_tasks.emplace(key, task.value()).first;
    }
    return &known->second;
}

std::optional<Choice> TaskCatalog::ruleChoice(const ShownPair& pair)
{
    const TaskInfo* task = find(pair.task);
    if (!task || !task->hasRule())
        return std::nullopt;
    auto choice = task->ruleChoice(pair.left, pair.right);
    return choice ? std::optional<Choice>(choice.value()) : std::nullopt;
}

} // namespace d2dpo
