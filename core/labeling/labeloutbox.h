// SPDX-License-Identifier: GPL-3.0-or-later
// A team labeler's outbox: every choice (and every undo) made on a team store is written here,
// to a journal on this machine's disk, before anything is sent to the server; a writer on another
// thread sends the entries in order and marks them done. So the window never waits on the
// network, and a choice survives the server being out of reach, the application closing and a
// crash alike: the next sitting sends what the last one could not. The journal is a file of JSON
// lines, each flushed to disk (fsync) before the call returns; a line torn by a crash is ignored.
// One process holds a journal at a time (an flock), so two windows never send the same entry.
// Thread-safe: the session appends on the window's thread while the writer sends on its own.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/choice.h"
#include "base/result.h"
#include "store/preferencestore.h"

namespace d2dpo {

struct OutboxEntry {
    enum class Kind { Label, Undo };
    int64_t seq = 0; ///< this outbox's order, from 1
    Kind kind = Kind::Label;
    ShownPair pair;  ///< Label: the pair as it was shown
    Choice choice = Choice::Skip;
    int64_t decideMs = 0;
    int64_t undoes = 0;  ///< Undo: the seq of the label it takes back
    int64_t labelId = 0; ///< Undo: the store's id of that label (0 until it is known)
    bool inherited = false; ///< kept by an earlier sitting (its pair is checked before it is sent)
};

class LabelOutbox {
public:
    /// The journal of `labeler` on the team store named `storeName` (its URL without the password),
    /// in this machine's data folder: <data>/d2dpo-studio/team/outbox/<labeler>@<store>-<hash>.jsonl.
    static std::string defaultPath(const std::string& storeName, const std::string& labeler);
    /// Opens (creating it and its folder) the journal at `path` and reads what an earlier sitting
    /// left unsent. Refused (ErrorCode::Denied) when another process holds it; refused too when a
    /// line other than the last cannot be read (the file is left as it is, for a person to look at).
    static Result<std::unique_ptr<LabelOutbox>> open(const std::string& path);
    ~LabelOutbox();
    LabelOutbox(const LabelOutbox&) = delete;
    LabelOutbox& operator=(const LabelOutbox&) = delete;

    const std::string& path() const { return m_path; }

    // The session's side (the window's thread).
    /// Keeps a choice on `pair`; on disk when this returns. Returns its seq.
    Result<int64_t> addLabel(const ShownPair& pair, Choice choice, int64_t decideMs);
    /// Takes back the label `labelSeq`: dropped unsent when the writer has not taken it (returns 0),
    /// else an undo entry is kept after it (returns its seq).
    Result<int64_t> undo(int64_t labelSeq);
    /// Entries not yet done (labels and undos), and the pairs their labels are on.
    size_t pendingCount() const;
    std::set<int64_t> pendingPairIds() const;
    /// What an earlier sitting left unsent, as read by open().
    size_t inheritedCount() const { return m_inherited; }

    // The writer's side (its own thread).
    /// The oldest pending entry, now in flight (the session can no longer drop it); nothing when
    /// none is pending or one is in flight already.
    std::optional<OutboxEntry> take();
    /// The entry in flight reached the store: a label as `labelId`, an undo (labelId 0).
    Status done(int64_t seq, int64_t labelId);
    /// The store refused the entry in flight; it is given up, with the reason.
    Status refused(int64_t seq, const std::string& reason);
    /// The entry in flight could not be sent (the store is out of reach): pending again, first.
    void putBack(int64_t seq);
    /// The store's id of the label `labelSeq` once written (0: not written, refused or dropped).
    int64_t labelIdOf(int64_t labelSeq) const;

private:
    LabelOutbox(std::string path, int fd);
    /// Appends one line and flushes it to disk.
    Status append(const std::string& line);
    /// Empties the file once nothing is pending, so it never grows past one sitting's backlog.
    void compactIfIdle();
    void apply(const std::string& line, bool replaying);

    mutable std::mutex m_mutex;
    std::string m_path;
    int m_fd = -1;
    int64_t m_nextSeq = 1;
    std::map<int64_t, OutboxEntry> m_pending; ///< by seq
    int64_t m_inFlight = 0;
    std::map<int64_t, int64_t> m_labelIds;    ///< label seq -> the store's label id, once written
    size_t m_inherited = 0;
};

} // namespace d2dpo
