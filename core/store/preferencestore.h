// SPDX-License-Identifier: GPL-3.0-or-later
// The preference store, on an SQLite file or a team's PostgreSQL server (store/sql/), holding
// models (with lineage), generated sequences, the pairs as shown (which sequence was on the left),
// the experts' labels (undo keeps history), training runs and their metric series; its records are
// in store/records.h. Foreign keys (and WAL on SQLite), a schema version with forward migrations;
// every label is committed the moment it is made. No torch and no Qt here.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "store/records.h"

namespace d2dpo {

class PreferenceStore {
public:
    enum class OpenMode {
        CreateIfMissing, ///< a new store file (not its folder) is created; the default path's folder too
        MustExist,       ///< for commands that only read, or change what is there: nothing is created
    };
    /// Opens (or creates) the store at `path`: an SQLite file, or a team store on a PostgreSQL
    /// server when it is a URL (postgresql://..., libpq's conventions: ~/.pgpass, PGSERVICE,
    /// sslmode); a team store's schema, roles and row security are made by the first open of an
    /// empty database by a role that may create them (`d2dpo store init URL`). Refuses, without changing the file, one that is
    /// not a database, is corrupt, comes from a newer schema, or cannot be written. Runs left
    /// "running" by a process that died (its run lock is free) are marked "interrupted".
    static Result<std::unique_ptr<PreferenceStore>> open(const std::string& path,
                                                         OpenMode mode = OpenMode::CreateIfMissing);
    /// $XDG_DATA_HOME/d2dpo-studio/preferences.sqlite, else ~/.local/share/d2dpo-studio/...
    static std::string defaultPath();

    ~PreferenceStore();
    PreferenceStore(const PreferenceStore&) = delete;
    PreferenceStore& operator=(const PreferenceStore&) = delete;
    const std::string& path() const;
    /// The store as messages name it: the file, or the URL without its password.
    std::string displayName() const;
    /// A PostgreSQL store shared by a team (rather than one SQLite file).
    bool isTeamStore() const;
    /// A team store's labeler: the role that logged in (session_user); "" on an SQLite store.
    const std::string& teamIdentity() const;
    /// Whether this connection may generate pairs, train and manage models: always on an SQLite
    /// store; on a team store, a role in d2dpo_maintainer (or the store's owner).
    bool canMaintain() const;
    int schemaVersion() const;
    /// The latest schema this build writes and reads.
    static int latestSchemaVersion();
    /// Ok while the file this store opened is still the one at its path; an error when it was
    /// deleted or replaced since (writes would go nowhere a later open could see).
    Status stillAtItsPath() const;

    /// Inserts, or updates a model with the same id; records its task (addTask) when given.
    Status addModel(const ModelRecord& model);
    Result<std::vector<ModelRecord>> models();
    Result<std::optional<ModelRecord>> model(const std::string& id);
    Status renameModel(const std::string& id, const std::string& name);
    /// How many models were fine-tuned from this one.
    Result<int64_t> modelChildren(const std::string& id);
    /// Removes a model from the store (its file stays); refused while models descend from it. Its
    /// sequences and their labels stay, no longer naming it.
    Status deleteModel(const std::string& id);

    /// A model's evaluation under `sampler` (everything about how samples are drawn and measured,
    /// as one text), `samples` and `seed`: the metrics JSON when it was measured before, else nothing.
    Result<std::optional<std::string>> evaluation(const std::string& modelId, const std::string& sampler,
                                                  int64_t samples, uint64_t seed);
    /// Records it (a known one is replaced). The model must be in the store.
    Status saveEvaluation(const std::string& modelId, const std::string& sampler, int64_t samples, uint64_t seed,
                          const std::string& metricsJson);

    /// Records a task's spec (with its data) under its key; a known key is left as it is.
    Status addTask(const std::string& key, const std::string& specJson);
    /// The spec stored under `key`, or nothing.
    Result<std::optional<std::string>> taskSpec(const std::string& key);

    /// Stores the sequences and the pairs as shown, in one transaction; returns the pair ids.
    /// A pair of two identical sequences, or one without its task key, is refused.
    Result<std::vector<int64_t>> addPairs(const std::vector<ShownPair>& pairs, const std::string& source);
    /// The pairs still to label in the queue's order (oldest first, or least sure first); only the task's when `task` is given. A training or
    /// comparison pair is pending while it has fewer active labels than the overlap; for a named
    /// `labeler`, only those it has not labelled, with its unlabelled gold pairs mixed in at the
    /// gold rate (a seeded draw per position), and never more gold than other pairs.
    Result<std::vector<ShownPair>> pendingPairs(int64_t limit, const std::string& task = "",
                                                const std::string& labeler = "");
    Result<ShownPair> pair(int64_t id);
    /// Hands up to `count` (kMaxLeasesPerLabeler at most) pending pairs (pendingPairs' order and
    /// rules) to `labeler` under a lease of QueueSettings::leaseSeconds, in one transaction: a pair
    /// leased to others as many times as it still needs labels is not handed out again until a
    /// lease expires or becomes a label.
    /// The labeler's own unexpired leases come back first, so a restart resumes them.
    Result<std::vector<ShownPair>> claimPairs(const std::string& labeler, int64_t count, const std::string& task = "");
    /// Gives the labeler's leases back (the application closing, the queue left).
    Status releaseLeases(const std::string& labeler);
    /// Every labeler's labels and leases, most labels first.
    Result<std::vector<LabelerProgress>> teamProgress();

    /// Records a label, committed before this returns. Refused (AlreadyLabelled) when the labeler
    /// labelled the pair already (a double key press cannot label twice) or when a training or
    /// comparison pair has its overlap's labels; a gold pair takes one label from each labeler.
    Result<int64_t> addLabel(int64_t pairId, Choice choice, const std::string& labeler, int64_t decideMs);
    /// Marks the labeler's latest active label as undone (kept as history); returns its pair id,
    /// or nothing when there is nothing to undo.
    Result<std::optional<int64_t>> undoLastLabel(const std::string& labeler);
    /// Marks these labels undone (kept as history), in one transaction; returns the pairs of those
    /// that were active. The Label view undoes exactly what its session labelled this way.
    Result<std::vector<int64_t>> undoLabels(const std::vector<int64_t>& labelIds);

    Result<QueueSettings> queueSettings();
    /// Overlap 1..QueueSettings::kMaxOverlap, gold rate 0..QueueSettings::kMaxGoldRate.
    Status setQueueSettings(const QueueSettings& settings);
    /// Records `modelId`'s margins on these pairs (replacing earlier ones), in one transaction; an
    /// unknown pair id is an error and nothing is written.
    Status setPairMargins(const std::vector<PairMargin>& margins, const std::string& modelId);
    /// The margin recorded on a pair and the model that gave it; nothing when it has none.
    Result<std::optional<std::pair<double, std::string>>> pairMargin(int64_t pairId);
    /// Every pending pair (pendingPairs() with no labeler, no task and no limit), counted with
    /// those that have a margin, in one query. Maintainers only on a team store.
    Result<PendingMargins> pendingMargins();
    /// Stores gold pairs (their sequences too) in one transaction; returns their ids.
    Result<std::vector<int64_t>> addGoldPairs(const std::vector<GoldPair>& pairs, const std::string& source);
    /// Makes an unlabelled training pair a gold pair with this answer (left or right).
    Status markGold(int64_t pairId, Choice answer);
    /// Records a blind comparison of `modelIds` (all in the store, one task) with its pairs, in one
    /// transaction; returns its id.
    Result<int64_t> addComparison(const std::string& task, const std::vector<std::string>& modelIds,
                                  const std::vector<ShownPair>& pairs);
    Result<std::vector<ComparisonRecord>> comparisons();
    /// Every active label with its pair, oldest first, or one comparison's (`comparisonId` > 0); a
    /// team store's labeler reads its own, without gold answers or model ids.
    Result<std::vector<JudgedLabel>> judgedLabels(int64_t comparisonId = 0);
    Result<LabelCounts> counts(const std::string& labeler);
    Result<std::vector<LabelRecord>> labels(bool includeUndone);
    /// The labeler's active labels with the pairs they label, oldest first.
    Result<std::vector<std::pair<ShownPair, LabelRecord>>> labelledPairs(const std::string& labeler);
    /// Active ties, skips and both-bad labels with their pairs, oldest first (what DPO cannot use).
    Result<std::vector<std::pair<ShownPair, LabelRecord>>> undecidedLabels();
    /// Active left/right labels, oldest first (ties and skips left out).
    Result<std::vector<PreferenceRecord>> preferences();
    /// What a model of `task` trains on: those of them on that task's sequences by `labelers`
    /// (empty: everyone's), oldest first.
    Result<std::vector<PreferenceRecord>> preferences(const std::string& task, const std::vector<std::string>& labelers);
    /// How many of them there are, and how many the selection leaves out.
    Result<UsablePairs> usablePairs(const std::string& task, const std::vector<std::string>& labelers);
    /// Who labelled the task's sequences decisively: people first, then simulated experts, by name.
    Result<std::vector<LabelerCount>> labelersOf(const std::string& task);

    Result<int64_t> startRun(const RunRecord& run);
    Status appendMetrics(int64_t runId, int64_t step, const std::map<std::string, double>& values);
    /// Many points in one transaction (a training run flushes its buffered series this way).
    Status appendMetrics(int64_t runId, const std::vector<MetricPoint>& points);
    Status finishRun(int64_t runId, RunStatus status, const std::string& error,
                     const std::string& resultModelId);
    /// A stopped or interrupted run running again (resumed) from `fromStep`, now alive under
    /// `lockPath`; the metric points the dead attempt recorded after that step are dropped, so the
    /// curves hold one attempt.
    Status reopenRun(int64_t runId, const std::string& lockPath, int64_t fromStep);
    Result<std::vector<RunRecord>> runs();
    Result<std::optional<RunRecord>> run(int64_t id);
    /// (step, value) of one metric of one run, by step.
    Result<std::vector<std::pair<int64_t, double>>> metricSeries(int64_t runId, const std::string& name);

    /// Runs a multi-statement import: all or nothing. Used by the JSONL importer. A record equal
    /// to a stored decisive label (same task, chosen, rejected and labeler) or to an earlier
    /// record is left out and counted; nothing at all is recorded when every record is one.
    Result<ImportOutcome> importPreferences(const std::vector<PreferenceRecord>& records, const std::string& file);
    Result<std::vector<ImportRecord>> imports();

    /// Deletes the selected labels (history included) in one transaction, and the pairs of an
    /// import or model with their sequences; with `dryRun`, only counts them.
    Result<DeletedLabels> deleteLabels(const LabelSelection& selection, bool dryRun);

    /// Marks running runs whose lock no process holds as interrupted; returns how many.
    Result<int64_t> markDeadRunsInterrupted();

    /// Copies every record of `from` (models with lineage, tasks, evaluations, sequences, pairs, labels
    /// with history, imports, comparisons, runs with series, queue settings; not leases) into `to`,
    /// which must hold none yet: one transaction, ids kept, each table's count checked against the
    /// source before it commits. Returns each table's name and count, in the order copied.
    static Result<std::vector<std::pair<std::string, int64_t>>> copyAll(PreferenceStore& from, PreferenceStore& to);

    /// PRAGMA integrity_check: "ok" or SQLite's report.
    Result<std::string> integrityCheck();

private:
    static Result<std::unique_ptr<PreferenceStore>> openTeamStore(const std::string& url, OpenMode mode);
    Result<std::vector<std::pair<ShownPair, LabelRecord>>> activeLabels(const std::string& labeler, bool undecidedOnly);
    struct Impl;
    explicit PreferenceStore(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace d2dpo
