// SPDX-License-Identifier: GPL-3.0-or-later
// The serialisable spec of a task (see tasks/task.h): which task, its sequence length, the rule
// its metrics measure and, for a task read from a sequence file, its vocabulary and training
// sequences. Every checkpoint stores it whole, so a model carries its task wherever it goes.
// No torch here: the store and the views read it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/result.h"

namespace d2dpo {

struct TaskConfig {
    std::string name = "binary-integers"; ///< "binary-integers" (the paper's) or "sequences"
    int length = 16;                      ///< sequence length D (for "sequences": the longest, pads included)
    std::string rule;                     ///< what the rule metrics measure ("motif:^[aeiou]"); "" = the task's default

    // "sequences" only.
    std::string symbols;              ///< the vocabulary, one character per token, in token order
    bool padded = false;              ///< lengths vary: token symbols.size() is the pad, at the end only
    int minLength = 1;                ///< the shortest training sequence
    std::string validity = "symbols"; ///< "symbols" (well-formed) or "in-data" (also one of the training sequences)
    std::string source;               ///< the data file's name, for people
    std::vector<std::string> data;    ///< the training sequences as text, duplicates kept
    std::string key;                  ///< set when read from JSON without its data (the store's copy)
};

/// The identity of a task's sequences: two tasks with the same key read and write the same texts
/// over the same tokens, so labels of one train the other. The rule is not part of it.
std::string taskKey(const TaskConfig& config);

/// A task's name for lists and drop-downs: "binary integers, N=16" or the data file's name
/// ("globins45.fa"), else "sequences, length 150".
std::string taskTitle(const TaskConfig& config);

/// `withData` false leaves the training sequences out (the store's model rows) and keeps the key.
nlohmann::json taskConfigToJson(const TaskConfig& config, bool withData = true);
/// Throws nlohmann::json::exception on a malformed object; older files without the newer fields
/// read as the binary-integers task they were.
TaskConfig taskConfigFromJson(const nlohmann::json& json);

Status validate(const TaskConfig& config);

} // namespace d2dpo
