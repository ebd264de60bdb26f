// SPDX-License-Identifier: GPL-3.0-or-later
// The tasks of the store's sequences, read once per task key from the store's tasks table and
// kept: the Label view draws, hints and rule-labels each pair with its own task's, and the
// statistics compare each label with its own task's rule.
#pragma once

#include <QString>

#include <map>
#include <optional>
#include <string>

#include "base/choice.h"
#include "jobs/taskinfo.h"
#include "store/preferencestore.h"

namespace d2dpo::ui {

class TaskCache {
public:
    explicit TaskCache(PreferenceStore& store) : m_store(store) {}

    /// The task with `key`, or null (with the reason in lastError()) when the store cannot make it.
    const TaskInfo* find(const std::string& key);
    /// The rule's choice for a pair, or nothing when its task has no rule or cannot be read.
    std::optional<Choice> ruleChoice(const ShownPair& pair);
    QString lastError() const { return m_lastError; }

private:
    PreferenceStore& m_store;
    std::map<std::string, TaskInfo> m_tasks;
    QString m_lastError;
};

} // namespace d2dpo::ui
