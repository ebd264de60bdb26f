// SPDX-License-Identifier: GPL-3.0-or-later
// One labeler's sitting at the store: the queue of pairs to label, the pair on screen, and what
// this session may undo. Every label is committed as it is made, or kept in an outbox on disk
// that a writer on another thread sends (a team store's window). Undo takes back this session's
// latest action (one label, or an applied rule plan as one step) and shows its pairs again next;
// it never reaches an earlier session's or another labeler's labels: a new labeler starts a new
// session. The Label view drives one; `d2dpo pairs` and `d2dpo label` use its parts.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/choice.h"
#include "base/result.h"
#include "labeling/generatedpairs.h"
#include "labeling/labeloutbox.h"
#include "labeling/rulelabeler.h"
#include "store/preferencestore.h"

namespace d2dpo {

class LabelSession {
public:
    LabelSession(PreferenceStore& store, std::string labeler);
    /// On a team store without an outbox, gives the pairs it holds back to the queue (with one,
    /// the outbox's writer does, on its own connection).
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
    bool canUndo() const { return !m_undoSteps.empty(); }

    /// Shows the next queued pair, refilling the queue with the store's pending pairs when empty
    /// (with an outbox, only from the queue: claims come in through addClaimed()).
    Status advance();
    /// Only pairs of this task from now on (empty: every task's): the queue is read again, and a
    /// current pair of another task is put back (shown again when its task is chosen).
    void setTask(std::string taskKey);
    const std::string& task() const { return m_task; }
    /// Forgets the queue (the current pair stays) so the next advance reads the store again.
    void dropQueue() { m_queue.clear(); }

    struct Labelled {
        int64_t pairId = 0;
        int64_t labelId = 0;    ///< 0 when someone labelled the pair first (AlreadyLabelled), or when kept in the outbox
        std::string otherwise;  ///< then why this label was not stored
        int64_t outboxSeq = 0;  ///< with an outbox: the choice is kept there, sent by its writer
    };
    /// Labels the current pair and moves on. A pair labelled meanwhile by someone else is passed
    /// over (its label is theirs); any other failure keeps the pair current and is returned. With
    /// an outbox the choice is kept there (on disk) and the store is not called.
    Result<Labelled> label(Choice choice, int64_t decideMs);

    /// Makes the current pair a gold pair with `answer` (left or right, as shown) and moves on, as
    /// `d2dpo prefs gold --mark` does: the store refuses a pair with labels and a pair that is not
    /// a training pair. Not with an outbox: a team's labeler cannot mark gold pairs.
    Status markCurrentGold(Choice answer);
    /// Takes the current pair off the screen unlabelled and shows the next queued one, asking the
    /// store nothing; the pair it was (a maintainer's gold mark on a team store, written on another
    /// connection). Nothing when no pair is shown. A claim never brings it back in this session.
    std::optional<ShownPair> setAsideCurrent();
    /// What was done with a pair set aside failed: a claim may bring it back again.
    void forgetSetAside(int64_t pairId) { m_setAside.erase(pairId); }

    struct Undone {
        std::vector<int64_t> pairIds; ///< shown again next, the latest first
        bool wasRulePlan = false;
    };

    /// On a team store the window never waits on the network: choices and undos go to `outbox`,
    /// which a writer on another thread sends, and pairs come in through addClaimed() (claimed on
    /// that writer's connection); this session then never calls the store for them. Without an
    /// outbox every label is committed here and now.
    void useOutbox(LabelOutbox* outbox) { m_outbox = outbox; }
    bool usesOutbox() const { return m_outbox != nullptr; }
    /// Pairs handed to this labeler by a claim, queued behind what it holds; a pair it holds
    /// already (on screen, queued, or chosen and still in the outbox) or labelled in this session
    /// is passed over. The first is shown when none is. Returns how many were new.
    size_t addClaimed(const std::vector<ShownPair>& pairs);
    /// The pairs this session holds: on screen, queued, and chosen but not yet sent.
    size_t held() const;
    /// The outbox's writer gave up the label `outboxSeq` (the store refused it): it no longer
    /// counts and cannot be undone.
    void forgetRefused(int64_t outboxSeq);

    /// The labels of this session's latest step when it is an applied rule plan (none else): what
    /// a team store's window takes back on another connection (undoneElsewhere()).
    std::optional<std::vector<int64_t>> latestRulePlan() const;
    /// The rule plan whose labels are `labelIds` was taken back on another connection: its step
    /// goes (wherever it is: a label made meanwhile stays undoable), and `pairs`, those of its
    /// labels that were active, are shown again next as undo() shows them.
    Status undoneElsewhere(const std::vector<int64_t>& labelIds, const std::vector<ShownPair>& pairs);
    /// Takes back this session's latest step; nothing when there is none. With an outbox, a label
    /// still there is dropped unsent, and one already sent is taken back by the outbox's writer.
    Result<std::optional<Undone>> undo();

    /// Where generated pairs join the queue: Next, ahead of everything, the current pair waiting
    /// behind them (label a new model's outputs next); AfterNext, behind the same model's pairs at
    /// the front (a later piece of such a batch: the pair on screen stays); Last, behind the queue.
    enum class QueuePlace { Next, AfterNext, Last };
    /// Stores a generated batch (storeGeneratedPairs) and queues its pairs at `place`. `margins`:
    /// those a least-sure batch was chosen by.
    Result<StoredPairs> addGenerated(const ModelRecord& model, const std::vector<ShownPair>& pairs, QueuePlace place,
                                     const GeneratedMargins& margins = {});
    /// Queues pairs stored already (storeGeneratedPairs on another connection: a team store's
    /// writes made off the window's thread) at `place`, as addGenerated() does.
    Status queueGenerated(const std::vector<ShownPair>& stored, QueuePlace place);

    /// Applies a rule plan as one undo step of this session; the queue is read again.
    RuleLabelOutcome applyRulePlan(RuleLabeler& labeler, const RuleLabelPlan& plan);
    /// Makes a plan applied on another connection (a team store's, off the window's thread) one
    /// undo step of this session, as applyRulePlan() does; a failure to read the queue again goes
    /// into `outcome`'s error when it has none.
    void recordRulePlan(RuleLabelOutcome& outcome);

private:
    struct Step {
        std::vector<int64_t> labelIds;
        bool rulePlan = false;
        int64_t outboxSeq = 0; ///< a label kept in the outbox (labelIds empty)
        ShownPair pair;        ///< its pair, shown again by an undo without asking the store
    };
    Status refill();
    /// The next queued pair without asking the store; none when the queue is empty.
    void advanceQueued();
    Result<std::optional<Undone>> undoOutboxStep(const Step& step);
    /// Puts `pairs` ahead of the queue (the last first), the current one behind them, and moves on.
    Status showAgain(const std::vector<ShownPair>& pairs);

    PreferenceStore& m_store;
    std::string m_labeler;
    std::string m_task;
    int m_labelled = 0;
    std::vector<Step> m_undoSteps;
    std::deque<ShownPair> m_queue;
    std::optional<ShownPair> m_current;
    LabelOutbox* m_outbox = nullptr;
    /// Pairs labelled through the outbox in this session (a claim that raced their sending may
    /// still hand them out as this labeler's leases).
    std::set<int64_t> m_labelledPairs;
    std::set<int64_t> m_setAside; ///< pairs taken off the screen unlabelled (setAsideCurrent)
};

} // namespace d2dpo
