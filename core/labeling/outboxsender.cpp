// SPDX-License-Identifier: GPL-3.0-or-later
#include "labeling/outboxsender.h"

namespace d2dpo {

namespace {

/// This labeler's active label on `pairId` (0: none): a retry whose first commit went through.
Result<int64_t> ownLabel(PreferenceStore& store, const std::string& labeler, int64_t pairId)
{
    auto mine = store.labelledPairs(labeler);
    if (!mine)
        return makeError(mine.errorCode(), mine.error());
    for (const auto& [pair, label] : mine.value())
        if (pair.id == pairId)
            return label.id;
    return int64_t(0);
}

} // namespace

OutboxReport sendOutbox(LabelOutbox& outbox, PreferenceStore& store, const std::string& labeler)
{
    OutboxReport report;
    auto stopUnreachable = [&](int64_t seq, const std::string& error) {
        outbox.putBack(seq);
        report.unreachable = true;
        report.error = error;
    };
    while (auto entry = outbox.take()) {
        if (entry->kind == OutboxEntry::Kind::Undo) {
            if (entry->labelId == 0) { // its label was refused or never written: nothing to take back
                (void)outbox.done(entry->seq, 0);
                ++report.undone;
                continue;
            }
            auto undone = store.undoLabels({entry->labelId});
            if (!undone && undone.errorCode() == ErrorCode::Unreachable) {
                stopUnreachable(entry->seq, undone.error());
                break;
            }
            if (!undone) {
                (void)outbox.refused(entry->seq, undone.error());
                report.refused.emplace_back(entry->seq, undone.error());
                continue;
            }
            (void)outbox.done(entry->seq, 0);
            ++report.undone;
            continue;
        }
        auto id = store.addLabel(entry->pair.id, entry->choice, labeler, entry->decideMs);
        if (!id && id.errorCode() == ErrorCode::Unreachable) {
            stopUnreachable(entry->seq, id.error());
            break;
        }
        int64_t labelId = id ? id.value() : 0;
        if (!id && id.errorCode() == ErrorCode::AlreadyLabelled) {
            auto own = ownLabel(store, labeler, entry->pair.id);
            if (!own) {
                stopUnreachable(entry->seq, own.error()); // cannot tell yet: try again later
                break;
            }
            labelId = own.value();
        }
        if (labelId > 0) {
            (void)outbox.done(entry->seq, labelId);
            report.written.emplace_back(entry->seq, labelId);
        } else {
            const std::string reason = "pair #" + std::to_string(entry->pair.id) + ": " + id.error();
            (void)outbox.refused(entry->seq, reason);
            report.refused.emplace_back(entry->seq, reason);
        }
    }
    report.pending = outbox.pendingCount();
    return report;
}

} // namespace d2dpo
