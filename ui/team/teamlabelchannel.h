// SPDX-License-Identifier: GPL-3.0-or-later
// The Label view's line to a team store: owns the thread where TeamStoreWorker talks to the
// server, hands it the work (send the outbox, claim pairs, read the counts and the models) one
// request of each kind at a time, and says on screen what the server's absence means: choices
// kept on this machine, tried again every few seconds, written when it is back, or refused with
// the reason. The window's thread never waits on the network; closing waits a few seconds at most.
#pragma once

#include <QObject>
#include <QString>

#include <memory>
#include <string>
#include <vector>

#include "labeling/labeloutbox.h"
#include "ui/team/teamstoreworker.h"

class QThread;
class QTimer;

namespace d2dpo::ui {

class TeamLabelChannel final : public QObject {
    Q_OBJECT
public:
    static constexpr int kRetryMs = 5000;
    static constexpr int kCloseWaitMs = 3000;
    static constexpr int kGiveUpWaitMs = 1000; ///< for the thread to end once its wait is given up
    /// A send or claim unanswered this long (a server or network that hangs rather than refuses) is said.
    static constexpr int kSlowMs = 10000;
    /// Starts the thread for `labeler` on the team store at `url`; sends at once what `outbox`
    /// kept from an earlier sitting.
    TeamLabelChannel(const std::string& url, const std::string& labeler, std::shared_ptr<LabelOutbox> outbox,
                     QObject* parent);
    /// One last send and the leases given back (TeamStoreWorker::finish), waited for kCloseWaitMs
    /// at most, then the server's answer given up: what is still unsent stays in the outbox for
    /// the next sitting.
    ~TeamLabelChannel() override;

    /// The outbox has new entries.
    void send();
    /// Claims up to `count` pairs of `task` (claimed); a claim on its way already is enough (the
    /// worker also claims again by itself after a claim that met a lost server).
    void claim(const std::string& task, int64_t count);
    bool claiming() const { return m_claiming; }
    void readCounts(const std::string& task, bool otherTasks);
    void readModels();
    /// The last try did not reach the server (tried again every kRetryMs).
    bool outOfReach() const { return m_outOfReach; }
    /// Choices and undos kept here, not yet on the server.
    size_t waiting() const { return m_outbox->pendingCount(); }

Q_SIGNALS:
    void statusMessage(const QString& message);
    void claimed(const d2dpo::ui::TeamClaim& claim);
    void countsRead(const d2dpo::ui::TeamCounts& counts);
    void modelsRead(const d2dpo::ui::TeamModels& models);
    /// Labels reached the store, or were taken back there: its counts changed.
    void written();
    /// The store refused the kept label `seq`, for `reason`.
    void refused(qint64 seq, const QString& reason);
    /// The server was out of reach and answers again.
    void back();

private:
    void onSent(const OutboxReport& report);
    void onClaimed(const TeamClaim& claim);
    void onCountsRead(const TeamCounts& counts);
    /// Out of reach: said once, then tried again every kRetryMs.
    void lost(const std::string& error);
    template <typename F>
    void post(F&& work);

    std::shared_ptr<LabelOutbox> m_outbox;
    QThread* m_thread = nullptr;
    TeamStoreWorker* m_worker = nullptr;
    QTimer* m_retry = nullptr;
    QTimer* m_slow = nullptr;
    bool m_saidSlow = false; ///< "has not answered" was said: its answer is said too
    bool m_sending = false;   ///< a send is on its way: later entries go with the next one
    bool m_sendAgain = false;
    bool m_claiming = false;
    bool m_reading = false;
    bool m_readAgain = false;
    std::string m_countsTask;
    bool m_countsOthers = false;
    bool m_outOfReach = false;
    size_t m_saidKept = 0;    ///< the choices kept when the server's absence was last said
    bool m_retrying = false;  ///< the send on its way is the timer's: its failure is said again
    size_t m_inherited = 0;   ///< kept by an earlier sitting, said once written
};

} // namespace d2dpo::ui
