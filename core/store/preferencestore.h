// SPDX-License-Identifier: GPL-3.0-or-later
// The preference store: one SQLite file holding models (with lineage), generated sequences, the
// pairs as shown (which sequence was on the left), the experts' labels (undo keeps history),
// training runs and their metric series. WAL, foreign keys, a schema version with forward
// migrations; every label is committed the moment it is made. No torch and no Qt here.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/choice.h"
#include "base/result.h"

namespace d2dpo {

struct ModelRecord {
    std::string id;
    std::string parentId;          ///< empty for a root (pretrained) model
    std::string kind;              ///< "pretrained" or "d2dpo"
    std::string name;
    std::string path;              ///< the checkpoint file
    std::string specJson = "{}";   ///< the model's spec, its task without the training sequences
    std::string taskKey;           ///< written with taskSpecJson into the tasks table by addModel
    std::string taskSpecJson;      ///< the task's whole spec; empty when read back
    std::string trainingJson = "{}";
    std::string metricsJson = "{}";
    std::optional<int64_t> runId;  ///< the run that produced it
    std::string createdAt;
};

/// A pair as it is (or was) shown: the left and right sequences as token text.
struct ShownPair {
    int64_t id = 0;
    std::string left;
    std::string right;
    std::string leftModelId;  ///< empty when imported
    std::string rightModelId;
    std::string task;         ///< the task key of both sequences (taskconfig.h)
};

struct LabelRecord {
    int64_t id = 0;
    int64_t pairId = 0;
    Choice choice = Choice::Skip;
    std::string labeler;
    int64_t decideMs = 0;
    std::string createdAt;
    bool undone = false;
};

struct LabelCounts {
    int64_t labelled = 0;   ///< pairs with an active label (any labeler)
    int64_t byLabeler = 0;  ///< of those, by the given labeler
    int64_t pending = 0;    ///< pairs without an active label
    int64_t decisive = 0;   ///< active left/right labels: the pairs training can use
};

/// A decisive label as training and export see it.
struct PreferenceRecord {
    std::string chosen;
    std::string rejected;
    std::string chosenModelId;
    std::string rejectedModelId;
    std::string chosenSide; ///< "left" or "right": where the chosen one was shown
    std::string labeler;
    int64_t decideMs = 0;
    std::string labelledAt;
    std::string task; ///< the task key of both sequences
};

/// One value of one metric of a run at one step.
struct MetricPoint {
    int64_t step = 0;
    std::string name;
    double value = 0;
};

struct RunRecord {
    int64_t id = 0;
    std::string kind;              ///< "d2dpo", "pretrain"
    std::string referenceModelId;
    std::string resultModelId;
    std::string configJson = "{}";
    std::string device;
    std::string status;            ///< "running", "completed", "stopped", "failed"
    std::string error;
    std::string startedAt;
    std::string finishedAt;
};

class PreferenceStore {
public:
    /// The latest schema this build writes and reads.
    static constexpr int kSchemaVersion = 2;

    /// Opens (or creates) the store at `path`. Refuses, without changing the file, one that is
    /// not a database, is corrupt, comes from a newer schema, or cannot be written.
    static Result<std::unique_ptr<PreferenceStore>> open(const std::string& path);
    /// $XDG_DATA_HOME/d2dpo-studio/preferences.sqlite, else ~/.local/share/d2dpo-studio/...
    static std::string defaultPath();

    ~PreferenceStore();
    PreferenceStore(const PreferenceStore&) = delete;
    PreferenceStore& operator=(const PreferenceStore&) = delete;

    const std::string& path() const;
    int schemaVersion() const;

    /// Inserts, or updates a model with the same id; records its task (addTask) when given.
    Status addModel(const ModelRecord& model);
    Result<std::vector<ModelRecord>> models();
    Result<std::optional<ModelRecord>> model(const std::string& id);

    /// Records a task's spec (with its data) under its key; a known key is left as it is.
    Status addTask(const std::string& key, const std::string& specJson);
    /// The spec stored under `key`, or nothing.
    Result<std::optional<std::string>> taskSpec(const std::string& key);

    /// Stores the sequences and the pairs as shown, in one transaction; returns the pair ids.
    /// A pair of two identical sequences, or one without its task key, is refused.
    Result<std::vector<int64_t>> addPairs(const std::vector<ShownPair>& pairs, const std::string& source);
    /// Pairs without an active label, oldest first; only the task's when `task` is given.
    Result<std::vector<ShownPair>> pendingPairs(int64_t limit, const std::string& task = "");
    Result<ShownPair> pair(int64_t id);

    /// Records a label, committed before this returns. A pair that already has an active label
    /// is refused (a double key press cannot label twice).
    Result<int64_t> addLabel(int64_t pairId, Choice choice, const std::string& labeler, int64_t decideMs);
    /// Marks the labeler's latest active label as undone (kept as history); returns its pair id,
    /// or nothing when there is nothing to undo.
    Result<std::optional<int64_t>> undoLastLabel(const std::string& labeler);
    Result<LabelCounts> counts(const std::string& labeler);
    Result<std::vector<LabelRecord>> labels(bool includeUndone);
    /// The labeler's active labels with the pairs they label, oldest first.
    Result<std::vector<std::pair<ShownPair, LabelRecord>>> labelledPairs(const std::string& labeler);
    /// Active left/right labels, oldest first (ties and skips left out).
    Result<std::vector<PreferenceRecord>> preferences();

    Result<int64_t> startRun(const RunRecord& run);
    Status appendMetrics(int64_t runId, int64_t step, const std::map<std::string, double>& values);
    /// Many points in one transaction (a training run flushes its buffered series this way).
    Status appendMetrics(int64_t runId, const std::vector<MetricPoint>& points);
    Status finishRun(int64_t runId, const std::string& status, const std::string& error,
                     const std::string& resultModelId);
    Result<std::vector<RunRecord>> runs();
    Result<std::optional<RunRecord>> run(int64_t id);
    /// (step, value) of one metric of one run, by step.
    Result<std::vector<std::pair<int64_t, double>>> metricSeries(int64_t runId, const std::string& name);

    /// Runs a multi-statement import: all or nothing. Used by the JSONL importer.
    Status importPreferences(const std::vector<PreferenceRecord>& records);

    /// PRAGMA integrity_check: "ok" or SQLite's report.
    Result<std::string> integrityCheck();

private:
    struct Impl;
    explicit PreferenceStore(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace d2dpo
