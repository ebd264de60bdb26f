// SPDX-License-Identifier: GPL-3.0-or-later
// A task as the views and the CLI see it, without tensors: its identity and vocabulary, what an
// alphabet it draws with, the hint beside a sequence, the rule's label for a pair (the simulated
// expert), the check an import runs on each sequence and the metrics it declares. Made from a
// checkpoint, from the store's copy of the task, or from a spec.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/choice.h"
#include "base/datafile.h"
#include "base/result.h"
#include "base/samplemetrics.h"
#include "base/sequencehint.h"
#include "base/taskconfig.h"
#include "store/preferencestore.h"

namespace d2dpo {

class Task;

/// Reads a FASTA or line file into a task spec (tasks/sequencefile.h).
Result<SequenceFileTask> readDataFile(const std::string& path, const SequenceFileOptions& options);

class TaskInfo {
public:
    /// `rule` replaces the task's own rule when given.
    static Result<TaskInfo> fromConfig(const TaskConfig& config, const std::string& rule = "");
    static Result<TaskInfo> fromCheckpoint(const std::string& path, const std::string& rule = "");
    /// The task of a stored sequence or model, from the store's tasks table (read once per store,
    /// key and rule in a process: a key names one spec for good).
    static Result<TaskInfo> fromStore(PreferenceStore& store, const std::string& key, const std::string& rule = "");
    /// The task of a stored model.
    static Result<TaskInfo> ofModel(PreferenceStore& store, const ModelRecord& model, const std::string& rule = "");

    const TaskConfig& config() const;
    std::string key() const;
    /// Writes its spec into the store's tasks table (so the store can read its sequences).
    Status recordIn(PreferenceStore& store) const;
    /// "binary-integers, length 16" or "sequences from words.txt: 26 symbols, lengths 3..8".
    std::string summary() const;
    /// How its symbols are drawn: "binary", "dna", "rna", "protein" or "text".
    std::string alphabet() const;
    /// Its vocabulary's symbols in token order ("01"; the 20 amino acids and X); the pad ('.') is
    /// not one of them. What a per-position profile counts (analysis/positionprofile.h).
    std::string symbols() const;
    /// Its training sequences as text, to set samples against: a sequence file's own (duplicates
    /// kept), or for a task that generates its data (binary-integers) `count` draws seeded with
    /// `seed`; empty for an imported model's task that came without data.
    std::vector<std::string> trainingTexts(int64_t count = 1000, uint64_t seed = 0) const;

    bool hasRule() const;
    std::string ruleSpec() const;        ///< "motif:^[aeiou]"; empty without a rule
    std::string ruleDescription() const; ///< "a match of ^[aeiou] beats no match"
    /// The labeler name of the rule's simulated expert ("rule:motif:^[aeiou]").
    std::string simulatedExpertName() const;
    /// The rule's label for a pair as shown; an error when the task has no rule or a text is not
    /// a sequence of the task.
    Result<Choice> ruleChoice(const std::string& left, const std::string& right) const;

    /// Where the rule looks in a sequence as shown: [begin, end) spans of its characters (a
    /// motif's matches); empty without a rule or for rules about the whole sequence.
    std::vector<std::pair<int, int>> ruleMatches(const std::string& text) const;

    SequenceHint hint(const std::string& text) const;
    /// Ok when `text` is a sequence of this task as format() writes it.
    Status check(const std::string& text) const;
    /// Every task's rules, for help texts.
    static std::string knownRules();
    /// The metrics it declares, in order, with descriptions (values 0).
    SampleMetrics declaredMetrics() const;

private:
    explicit TaskInfo(std::shared_ptr<const Task> task);
    /// fromStore() without its cache.
    static Result<TaskInfo> readFromStore(PreferenceStore& store, const std::string& key, const std::string& rule);
    std::shared_ptr<const Task> m_task;
};

} // namespace d2dpo
