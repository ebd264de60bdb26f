// SPDX-License-Identifier: GPL-3.0-or-later
// One labeler's sitting at the store: the queue of pairs to label, the pair on screen, and what
// this session may undo. Every label is committed as it is made. Undo takes back this session's
// latest action (one label, or an applied rule plan as one step) and shows its pairs again next;
// it never reaches an earlier session's or another labeler's labels: a new labeler starts a new
// session. The Label view drives one; `d2dpo pairs` and `d2dpo label` use its parts.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "base/choice.h"
#include "base/result.h"
#include "labeling/generatedpairs.h"
#include "labeling/rulelabeler.h"
#include "store/preferencestore.h"

namespace d2dpo {

class LabelSession {
public:
    LabelSession(PreferenceStore& store, std::string labeler);
    /// On a team store, gives the pairs it holds back to the queue (unless choices are still kept
    /// for them: then their leases run out as usual).
    ~LabelSession();
    LabelSession(const LabelSession&) = delete;
    LabelSession& operator=(const LabelSession&) = delete;

    const std::string& labeler() const { return m_labeler; }
    /// Another labeler from now on: a new session (nothing before it can be undone).
    void setLabeler(std::string labeler);

    /// The pair to label, or nothing when no pair is pending.
    const std::optional<ShownPair>& current() const { return m_current; }
    /// Pairs queued behind the current one.
    size_t queued() const { return m_queue.size(); }
    /// Labels this session made by hand (a rule plan's labels are not counted).
    int labelledCount() const { return m_labelled; }
    bool canUndo() const { return !m_undoSteps.empty() || !m_unsent.empty(); }

    /// Shows the next queued pair, refilling the queue with the store's pending pairs when empty.
    Status advance();
    /// Only pairs of this task from now on (empty: every task's): the queue is read again, and a
    /// current pair of another task is put back (shown again when its task is chosen).
    void setTask(std::string taskKey);
    const std::string& task() const { return m_task; }
    /// Forgets the queue (the current pair stays) so the next advance reads the store again.
    void dropQueue() { m_queue.clear(); }

    struct Labelled {
        int64_t pairId = 0;
        int64_t labelId = 0;    ///< 0 when someone labelled the pair first (AlreadyLabelled)
        std::string otherwise;  ///< then why this label was not stored
        bool kept = false;      ///< the team store could not be reached: the choice is kept, written later
        int keptWritten = 0;    ///< earlier kept choices written before this one (flushUnsent)
        std::vector<std::string> keptRefused; ///< earlier kept choices the store refused, with its reasons
    };
    /// Labels the current pair and moves on. A pair labelled meanwhile by someone else is passed
    /// over (its label is theirs); any other failure keeps the pair current and is returned.
    Result<Labelled> label(Choice choice, int64_t decideMs);

    struct Undone {
        std::vector<int64_t> pairIds; ///< shown again next, the latest first
        bool wasRulePlan = false;
    };
    /// Choices made while the team store could not be reached, not yet written.
    size_t unsentCount() const { return m_unsent.size(); }
    struct Flushed {
        int written = 0;
        std::vector<std::string> refused; ///< kept choices the store refused, with its reasons
    };
    /// Writes the kept choices, oldest first (label() tries this first too). A choice whose label
    /// the store already holds from this labeler (its commit went through but the answer was lost)
    /// counts as written, never twice; one the store refuses (the pair has its labels by now) is
    /// dropped with the reason. Stops while the store is still out of reach; the rest stay kept.
    Result<Flushed> flushUnsent();

    /// Takes back this session's latest step (a kept choice first); nothing when there is none.
    Result<std::optional<Undone>> undo();

    /// Stores a generated batch (storeGeneratedPairs) and queues its pairs: `first` puts them
    /// ahead of everything, the current pair waiting behind them (label a new model's outputs
    /// next); otherwise behind the queue. `margins`: those a least-sure batch was chosen by.
    Result<StoredPairs> addGenerated(const ModelRecord& model, const std::vector<ShownPair>& pairs, bool first,
                                     const GeneratedMargins& margins = {});

    /// Applies a rule plan as one undo step of this session; the queue is read again.
    RuleLabelOutcome applyRulePlan(RuleLabeler& labeler, const RuleLabelPlan& plan);

private:
    struct Step {
        std::vector<int64_t> labelIds;
        bool rulePlan = false;
    };
    struct Unsent {
        ShownPair pair;
        Choice choice = Choice::Skip;
        int64_t decideMs = 0;
    };
    Status refill();
    /// The next queued pair without asking the store (it is out of reach); none when the queue is empty.
    void advanceQueued();
    /// This labeler's active label on `pairId` (0: none), for a retry whose first commit went through.
    Result<int64_t> ownLabel(int64_t pairId);

    PreferenceStore& m_store;
    std::string m_labeler;
    std::string m_task;
    int m_labelled = 0;
    std::vector<Step> m_undoSteps;
    std::deque<ShownPair> m_queue;
    std::optional<ShownPair> m_current;
    std::vector<Unsent> m_unsent;
};

} // namespace d2dpo
