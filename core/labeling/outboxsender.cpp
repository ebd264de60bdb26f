// SPDX-License-Identifier: GPL-3.0-or-later
#include "labeling/outboxsender.h"

namespace d2dpo {

namespace {

/// Whether the store's refusal is for good: the pair is gone or has its labels, or the role may
/// not. Anything else (a lost connection, a deadlock, a cancelled statement, a full disk on the
/// server, a standby during failover) may pass: the entry stays kept and is tried again.
bool forGood(ErrorCode code)
{
    return code == ErrorCode::NotFound || code == ErrorCode::AlreadyLabelled || code == ErrorCode::Denied;
}

/// The label this entry's own earlier attempt left, if its commit went through and only the answer
/// was lost: this labeler's active label on the pair with the same choice and decision time (0:
/// none). Another window's label by the same role differs in its decision time and is not taken.
Result<int64_t> ownEarlierAttempt(PreferenceStore& store, const std::string& labeler, const OutboxEntry& entry)
{
    auto mine = store.labelledPairs(labeler);
    if (!mine)
        return makeError(mine.errorCode(), mine.error());
    for (const auto& [pair, label] : mine.value())
        if (pair.id == entry.pair.id)
            return label.choice == entry.choice && label.decideMs == entry.decideMs ? label.id : int64_t(0);
    return int64_t(0);
}

/// An entry kept by an earlier sitting names its pair by id: the pair there must still be the one
/// that was shown (a store made again at the same URL numbers its pairs anew).
Status samePairAsShown(PreferenceStore& store, const OutboxEntry& entry)
{
    auto there = store.pair(entry.pair.id);
    if (!there)
        return makeError(there.errorCode(), there.error());
    if (there->left != entry.pair.left || there->right != entry.pair.right)
        return makeError(ErrorCode::NotFound, "pair #" + std::to_string(entry.pair.id) +
                                                  " on the team store is not the pair that was labelled "
                                                  "(the store was made again?)");
    return Ok{};
}

} // namespace

OutboxReport sendOutbox(LabelOutbox& outbox, PreferenceStore& store, const std::string& labeler)
{
    OutboxReport report;
    // Kept for a later try, in order: nothing behind it goes first.
    auto stop = [&](int64_t seq, const std::string& error) {
        outbox.putBack(seq);
        report.unreachable = true;
        report.error = error;
    };
    auto giveUp = [&](int64_t seq, const std::string& reason) {
        (void)outbox.refused(seq, reason);
        report.refused.emplace_back(seq, reason);
    };
    while (auto entry = outbox.take()) {
        if (entry->kind == OutboxEntry::Kind::Undo) {
            if (entry->labelId == 0) { // its label was refused or never written: nothing to take back
                (void)outbox.done(entry->seq, 0);
                ++report.undone;
                continue;
            }
            auto undone = store.undoLabels({entry->labelId});
            if (!undone && !forGood(undone.errorCode())) {
                stop(entry->seq, undone.error());
                break;
            }
            report.reached = true;
            if (!undone) {
                giveUp(entry->seq, undone.error());
                continue;
            }
            (void)outbox.done(entry->seq, 0);
            ++report.undone;
            continue;
        }
        if (entry->inherited) {
            Status same = samePairAsShown(store, *entry);
            if (!same && !forGood(same.errorCode())) {
                stop(entry->seq, same.error());
                break;
            }
            if (!same) {
                report.reached = true;
                giveUp(entry->seq, same.error());
                continue;
            }
        }
        auto id = store.addLabel(entry->pair.id, entry->choice, labeler, entry->decideMs);
        if (!id && !forGood(id.errorCode())) {
            stop(entry->seq, id.error());
            break;
        }
        report.reached = true;
        int64_t labelId = id ? id.value() : 0;
        if (!id && id.errorCode() == ErrorCode::AlreadyLabelled) {
            auto own = ownEarlierAttempt(store, labeler, *entry);
            if (!own) {
                stop(entry->seq, own.error()); // cannot tell yet: try again later
                break;
            }
            labelId = own.value();
        }
        if (labelId > 0) {
            (void)outbox.done(entry->seq, labelId);
            report.written.emplace_back(entry->seq, labelId);
        } else {
            giveUp(entry->seq, "pair #" + std::to_string(entry->pair.id) + ": " + id.error());
        }
    }
    report.pending = outbox.pendingCount();
    return report;
}

} // namespace d2dpo
