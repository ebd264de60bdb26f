// SPDX-License-Identifier: GPL-3.0-or-later
// The Label view's connection to a team store, living on a thread of its own (TeamLabelChannel
// owns the thread): on one connection of its own it sends the outbox, claims pairs with the tasks
// they need, and reads the counts and the models, so the window's thread never waits on the network.
// What it learns goes out as signals with plain payloads; a lost server is reported, never thrown.
#pragma once

#include <QObject>

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "facades/taskinfo.h"
#include "labeling/outboxsender.h"
#include "store/preferencestore.h"
#include "ui/common/ownconnection.h"

namespace d2dpo::ui {

/// Pairs claimed for one task, with the tasks they need that were not sent before.
struct TeamClaim {
    std::string task;
    std::vector<ShownPair> pairs;
    std::vector<std::pair<std::string, TaskInfo>> tasks;
    std::string error; ///< nothing claimed: why
    bool unreachable = false;
};

/// The counters of the Label view's bottom bar, as the store has them.
struct TeamCounts {
    LabelCounts counts;
    std::vector<std::pair<ShownPair, LabelRecord>> labelled; ///< this labeler's active labels
    std::vector<std::pair<std::string, TaskInfo>> tasks;     ///< their tasks not sent before
    int64_t otherTasksPending = 0; ///< pending pairs of tasks other than the one asked about
    std::string error;             ///< nothing read: why
    bool unreachable = false;      ///< then read again once a send reaches the server
};

/// The store's models (a maintainer's Model box, the pairs' origins), with the tasks they name
/// that were not sent before.
struct TeamModels {
    std::vector<ModelRecord> models;
    std::vector<std::pair<std::string, TaskInfo>> tasks;
    std::string error; ///< nothing read: why
};

class TeamStoreWorker final : public QObject {
    Q_OBJECT
public:
    TeamStoreWorker(std::string url, std::string labeler, std::shared_ptr<LabelOutbox> outbox);
    ~TeamStoreWorker() override;

    // Called on the worker's thread (TeamLabelChannel posts them there).
    /// Sends the outbox (sent), then anything that waited for the server.
    void send();
    /// Claims up to `count` pairs of `task` (claimed); one that cannot reach the server is tried
    /// again with the next send.
    void claim(const std::string& task, int64_t count);
    /// Reads the counts (countsRead), with the pending pairs of tasks other than `task` when
    /// `otherTasks` (what an empty queue tells about); tried again later when out of reach.
    void readCounts(const std::string& task, bool otherTasks);
    /// Reads the store's models with their tasks (modelsRead): a maintainer's Model box, and
    /// where a pair comes from. A labeler reads none.
    void readModels();
    /// The window closes: one last send, the leases given back when nothing is left to send, and
    /// the connection closed.
    void finish();
    /// From any thread: the statement in flight fails now, and every later one (after finish()
    /// outlasted its wait: the thread then ends at once, its unsent choices kept in the outbox).
    void giveUp() { m_connection.giveUp(); }

Q_SIGNALS:
    void sent(const d2dpo::OutboxReport& report);
    void claimed(const d2dpo::ui::TeamClaim& claim);
    void countsRead(const d2dpo::ui::TeamCounts& counts);
    void modelsRead(const d2dpo::ui::TeamModels& models);

private:
    /// Reads the tasks `keys` not sent before into `out` (a task that cannot be read is asked again later).
    void readNewTasks(const std::vector<std::string>& keys, std::vector<std::pair<std::string, TaskInfo>>& out);

    OwnConnection m_connection;
    std::string m_labeler;
    std::shared_ptr<LabelOutbox> m_outbox;
    std::set<std::string> m_tasksSent;
    bool m_claimWanted = false; ///< a claim met a lost server: tried again with the next send
    std::string m_claimTask;
    int64_t m_claimCount = 0;
    bool m_countsWanted = false;
    std::string m_countsTask;
    bool m_countsOthers = false;
    std::string m_lastError; ///< why the last claim or read failed
};

} // namespace d2dpo::ui
