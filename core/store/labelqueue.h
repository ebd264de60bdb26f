// SPDX-License-Identifier: GPL-3.0-or-later
// The pairs and their labels: pairs as shown, the queue that hands them out (its settings, its
// order by margin, a team's leases, gold pairs), the experts' labels with their undo history, and
// the preferences a run trains on. One facet of PreferenceStore (store/preferencestore.h); a
// caller that labels or counts may take a LabelQueue&.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "store/records.h"
#include "store/storefacet.h"

namespace d2dpo {

class LabelQueue : protected StoreFacet {
public:
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
    /// Makes an unlabelled training pair a gold pair with this answer (left or right); its leases go.
    Status markGold(int64_t pairId, Choice answer);
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

protected:
    using StoreFacet::StoreFacet;

private:
    Result<std::vector<std::pair<ShownPair, LabelRecord>>> activeLabels(const std::string& labeler, bool undecidedOnly);
};

} // namespace d2dpo
