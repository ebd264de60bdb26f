// SPDX-License-Identifier: GPL-3.0-or-later
// The preference store's records: what it hands out and takes in (models, pairs as shown, labels,
// runs and their metrics, imports, queue settings), plain structs with typed fields. Read and
// written by store/preferencestore.h; no torch and no Qt here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/choice.h"
#include "base/runkind.h"
#include "base/runstatus.h"

namespace d2dpo {

struct ModelRecord {
    std::string id;
    std::string parentId;          ///< empty for a root (pretrained) model
    std::string kind;              ///< "pretrained" or "d2dpo"
    std::string name;
    std::string path;              ///< the checkpoint file
    std::string specJson = "{}";   ///< the model's spec, its task without the training sequences
    std::string taskKey;           ///< its task (taskconfig.h's key), read back from specJson
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
    bool blind = false;       ///< a blind comparison's pair: its models are not read back (empty ids)
};

/// What a pair is for. Only training pairs reach a run or an export; gold pairs (with a known
/// answer) measure the labelers who label them; a blind comparison's pairs rank models.
enum class PairPurpose { Train, Gold, Compare };

/// In which order the queue hands out pairs.
enum class QueueOrder {
    Oldest,     ///< as they were stored
    LeastSure,  ///< smallest |margin| first (setPairMargins: the latest fine-tuned model's), unscored pairs
                ///< last; a blind comparison's pairs (never scored) first, as they come
    Surest,     ///< largest |margin| first: the pairs a labeler most likely decides rather than ties; the same
                ///< places for comparison and unscored pairs
};
const char* toString(QueueOrder order);
std::optional<QueueOrder> queueOrderFromString(const std::string& text);

/// How pairs are handed out to labelers.
struct QueueSettings {
    static constexpr int kMaxOverlap = 100;
    static constexpr double kMaxGoldRate = 0.5;
    int overlap = 1;     ///< different labelers per pair (never one labeler twice), 1..kMaxOverlap
    double goldRate = 0; ///< the share of gold pairs mixed into each named labeler's queue, 0..kMaxGoldRate
    QueueOrder order = QueueOrder::Oldest;
    static constexpr int kMinLeaseSeconds = 1;
    static constexpr int kMaxLeaseSeconds = 24 * 3600;
    /// How long a pair handed to a labeler (claimPairs) is kept from others who would exceed the
    /// overlap; an abandoned lease expires after it and the pair goes back to the queue.
    int leaseSeconds = 600;
    /// The most pairs one labeler holds under lease at once (a team store's server keeps to it).
    static constexpr int kMaxLeasesPerLabeler = 16;
};

/// A model's implicit reward margin on a stored pair (jobs/pairscorer.h).
struct PairMargin {
    int64_t pairId = 0;
    double margin = 0; ///< r(left) - r(right)
};

/// A pair with its known answer.
struct GoldPair {
    ShownPair pair;
    Choice answer = Choice::Left; ///< left or right
};

/// An active label with its pair, as the agreement and comparison reports read it: the models
/// are named even for a blind pair (reports are read after labeling, never beside it).
struct JudgedLabel {
    int64_t labelId = 0;
    int64_t pairId = 0;
    PairPurpose purpose = PairPurpose::Train;
    std::optional<Choice> goldAnswer;
    int64_t comparisonId = 0; ///< 0 unless a comparison's
    std::string left;
    std::string right;
    std::string leftModelId;
    std::string rightModelId;
    std::string task;
    std::string labeler;
    Choice choice = Choice::Skip;
    int64_t decideMs = 0;
};

/// A blind comparison of models as recorded, with how far its labeling has come.
struct ComparisonRecord {
    int64_t id = 0;
    std::string task;
    std::vector<std::string> modelIds;
    std::string createdAt;
    int64_t pairs = 0;
    int64_t labels = 0; ///< active labels on its pairs
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

/// A decisive label as training and export see it (or, imported, an undecided one).
struct PreferenceRecord {
    std::string chosen;
    std::string rejected;
    std::string chosenModelId;
    std::string rejectedModelId;
    Choice choice = Choice::Left; ///< Left/Right: the chosen one's side; else undecided, `chosen` shown left
    std::string labeler;
    int64_t decideMs = 0;
    std::string labelledAt;
    std::string task;      ///< the task key of both sequences
    std::string pairKey;   ///< its pair in the store it came from: a file's labels of one pair share it
};

/// The store's decisive labels as a model of one task sees them.
struct UsablePairs {
    int64_t usable = 0;         ///< left/right labels of that task's sequences by the chosen labelers
    int64_t otherTask = 0;      ///< labels of other tasks' sequences (left out of a run, and counted)
    int64_t otherLabelers = 0;  ///< labels of the task by labelers not chosen (left out, and counted)
};

/// Who labelled a task's sequences, with their decisive-label counts.
struct LabelerCount {
    std::string labeler;
    int64_t decisive = 0;
    bool simulated = false;
};

/// A simulated expert ("rule:odd", as `d2dpo label` and auto-labelling record it) rather than a person.
bool isSimulatedLabeler(const std::string& labeler);

/// One labeler's share of a store's labels, as everyone on a team store may see it.
struct LabelerProgress {
    std::string labeler;
    int64_t labels = 0; ///< active labels
    int64_t leased = 0; ///< pairs held right now (unexpired leases)
};

/// One value of one metric of a run at one step.
struct MetricPoint {
    int64_t step = 0;
    std::string name;
    double value = 0;
};

struct RunRecord {
    int64_t id = 0;
    RunKind kind = RunKind::D2dpo;
    std::string referenceModelId;
    std::string resultModelId;
    std::string configJson = "{}";
    std::string device;
    RunStatus status = RunStatus::Running;
    std::string error;
    std::string startedAt;
    std::string finishedAt;
    std::string lockPath;          ///< the file its process keeps locked while it lives (base/runlock.h)
};

/// How many labels (and pairs, and sequences) a deletion removed, or would remove.
struct DeletedLabels {
    int64_t labels = 0;
    int64_t pairs = 0;
    int64_t sequences = 0;
};

/// Which labels `PreferenceStore::deleteLabels` removes; the set criteria must all hold.
struct LabelSelection {
    std::optional<int64_t> importId;  ///< the pairs of this import, with their labels and sequences
    std::string labeler;              ///< this labeler's labels (the pairs stay, pending again)
    std::string modelId;              ///< the pairs with a sequence of this model, with their labels
};

/// One JSONL import as recorded.
struct ImportRecord {
    int64_t id = 0;
    std::string file;
    std::string task;
    std::string createdAt;
    int64_t pairs = 0; ///< its pairs still in the store
};

/// What an import stored and what it left out.
struct ImportOutcome {
    int64_t importId = 0;
    int64_t imported = 0;
    int64_t duplicates = 0; ///< already in the store, or earlier in the same file (same chosen, rejected, labeler)
    int64_t undecided = 0;  ///< of those imported, ties, skips and both-bad: no preference to train on
};

/// How many pairs wait for labels (gold pairs aside) and how many of them carry a margin (the
/// queue's "least sure first" order reads it).
struct PendingMargins {
    int64_t pending = 0;
    int64_t withMargin = 0;
};

} // namespace d2dpo
