// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/taskcache.h"

namespace d2dpo::ui {

const TaskInfo* TaskCache::find(const std::string& key)
{
    auto known = m_tasks.find(key);
    if (known == m_tasks.end()) {
        // A failure is not kept: the store may learn the task later (a model added with it).
        auto task = TaskInfo::fromStore(m_store, key);
        if (!task) {
            m_lastError = QString::fromStdString(task.error());
            return nullptr;
        }
        known = m_tasks.emplace(key, task.value()).first;
    }
    return &known->second;
}

std::optional<Choice> TaskCache::ruleChoice(const ShownPair& pair)
{
    const TaskInfo* task = find(pair.task);
    if (!task || !task->hasRule())
        return std::nullopt;
    auto choice = task->ruleChoice(pair.left, pair.right);
    return choice ? std::optional<Choice>(choice.value()) : std::nullopt;
}

} // namespace d2dpo::ui
