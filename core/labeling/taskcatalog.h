// SPDX-License-Identifier: GPL-3.0-or-later
// The tasks of the store's sequences, each read once from the store's tasks table and kept: every
// pair is drawn, hinted and rule-labelled with its own task's. One catalog serves a labeling
// session, its statistics and its rule labeler alike.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "base/choice.h"
#include "facades/taskinfo.h"
#include "store/preferencestore.h"

namespace d2dpo {

class TaskCatalog {
public:
    /// `ruleOverride` replaces every task's own rule when given (`d2dpo label --rule`).
    explicit TaskCatalog(PreferenceStore& store, std::string ruleOverride = "")
        : m_store(store), m_ruleOverride(std::move(ruleOverride))
    {
    }

    /// The task with `key`, or null (with the reason in lastError()) when the store cannot make it.
    /// A failure is kept until forgetFailures(): asked again at every pair or every step of a spin
    /// box, a task the store lacks would be read again each time.
    const TaskInfo* find(const std::string& key);
    /// Asks the store again for the tasks it could not make: it may know them now (a model was
    /// added with one). Called when the models are read again.
    void forgetFailures() { m_failures.clear(); }
    /// Knows `key` as `task` from now on (read on another connection: a team store's worker).
    void add(const std::string& key, const TaskInfo& task)
    {
        m_tasks.insert_or_assign(key, task);
        m_failures.erase(key);
    }
    /// From now on find() answers from the tasks it knows and never reads the store (a team
    /// labeler's window: its worker reads them off the window's thread and add()s them).
    void readNoMore() { m_readsStore = false; }
    /// The rule's choice for a pair, or nothing when its task has no rule or cannot be read.
    std::optional<Choice> ruleChoice(const ShownPair& pair);
    const std::string& lastError() const { return m_lastError; }

private:
    PreferenceStore& m_store;
    std::string m_ruleOverride;
    std::map<std::string, TaskInfo> m_tasks;
    std::map<std::string, std::string> m_failures; ///< key -> why the store could not make it
    std::string m_lastError;
    bool m_readsStore = true;
};

} // namespace d2dpo
