// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/team/teamlabelchannel.h"

#include <QThread>
#include <QTimer>

#include <utility>

namespace d2dpo::ui {

namespace {
QString counted(size_t n, const QString& one, const QString& many) { return n == 1 ? one : many.arg(n); }
} // namespace

TeamLabelChannel::TeamLabelChannel(const std::string& url, const std::string& labeler,
                                   std::shared_ptr<LabelOutbox> outbox, QObject* parent)
    : QObject(parent), m_outbox(outbox), m_thread(new QThread), m_worker(new TeamStoreWorker(url, labeler, outbox)),
      m_retry(new QTimer(this)), m_slow(new QTimer(this)), m_inherited(outbox->inheritedCount())
{
    qRegisterMetaType<d2dpo::OutboxReport>();
    qRegisterMetaType<d2dpo::ui::TeamClaim>();
    qRegisterMetaType<d2dpo::ui::TeamCounts>();
    qRegisterMetaType<d2dpo::ui::TeamModels>();
    m_thread->setObjectName(QStringLiteral("team store"));
    m_worker->moveToThread(m_thread);
    connect(m_worker, &TeamStoreWorker::sent, this, &TeamLabelChannel::onSent);
    connect(m_worker, &TeamStoreWorker::claimed, this, &TeamLabelChannel::onClaimed);
    connect(m_worker, &TeamStoreWorker::countsRead, this, &TeamLabelChannel::onCountsRead);
    connect(m_worker, &TeamStoreWorker::modelsRead, this, &TeamLabelChannel::modelsRead);
    m_retry->setInterval(kRetryMs);
    connect(m_retry, &QTimer::timeout, this, [this] {
        if (m_sending)
            return; // the last try still waits on its connect: one at a time
        m_retrying = true;
        send();
    });
    m_slow->setSingleShot(true);
    m_slow->setInterval(kSlowMs);
    connect(m_slow, &QTimer::timeout, this, [this] {
        if (!(m_sending || m_claiming) || m_outOfReach)
            return;
        m_saidSlow = true;
        const size_t kept = m_outbox->pendingCount();
        Q_EMIT statusMessage(kept > 0 ? tr("The team store has not answered for %1 s: %2 kept here, written when it answers")
                                            .arg(kSlowMs / 1000)
                                            .arg(counted(kept, tr("1 choice"), tr("%1 choices")))
                                      : tr("The team store has not answered for %1 s; still waiting").arg(kSlowMs / 1000));
    });
    m_thread->start();
    if (m_inherited > 0)
        send();
}

TeamLabelChannel::~TeamLabelChannel()
{
    m_retry->stop();
    m_slow->stop();
    disconnect(m_worker, nullptr, this, nullptr); // nothing comes back to a window that closes
    // The thread ends after finish() (a quit() from here could end its loop before finish ran).
    post([w = m_worker, t = m_thread] {
        w->finish();
        t->quit();
    });
    if (m_thread->wait(kCloseWaitMs)) {
        delete m_worker;
        delete m_thread;
        return;
    }
    m_worker->giveUp(); // a server that hangs: its statement ends at once as a lost connection
    if (m_thread->wait(kGiveUpWaitMs)) {
        delete m_worker;
        delete m_thread;
        qWarning("d2dpo-studio: the team store did not answer within %d s, so the last send was given up; "
                 "unsent choices stay kept in %s",
                 kCloseWaitMs / 1000, m_outbox->path().c_str());
        return;
    }
    // Still connecting (libpq's connect waits up to its connect_timeout and hears no breaker): the
    // thread is left to end with the process; what it could not send stays in the outbox on disk.
    qWarning("d2dpo-studio: the team store was still being connected to after %d s: its thread is left to end "
             "with the program; unsent choices stay kept in %s",
             kCloseWaitMs / 1000, m_outbox->path().c_str());
}

template <typename F>
void TeamLabelChannel::post(F&& work)
{
    QMetaObject::invokeMethod(m_worker, std::forward<F>(work), Qt::QueuedConnection);
}

void TeamLabelChannel::send()
{
    if (m_sending) {
        m_sendAgain = true;
        return;
    }
    m_sending = true;
    m_sendAgain = false;
    m_slow->start();
    post([w = m_worker] { w->send(); });
}

void TeamLabelChannel::claim(const std::string& task, int64_t count)
{
    if (m_claiming)
        return;
    m_claiming = true;
    if (!m_slow->isActive())
        m_slow->start();
    post([w = m_worker, task, count] { w->claim(task, count); });
}

void TeamLabelChannel::readCounts(const std::string& task, bool otherTasks)
{
    m_countsTask = task;
    m_countsOthers = otherTasks;
    if (m_reading) {
        m_readAgain = true;
        return;
    }
    m_reading = true;
    m_readAgain = false;
    post([w = m_worker, task, otherTasks] { w->readCounts(task, otherTasks); });
}

void TeamLabelChannel::readModels()
{
    post([w = m_worker] { w->readModels(); });
}

void TeamLabelChannel::lost(const std::string& error)
{
    const size_t kept = m_outbox->pendingCount();
    const QString choices = counted(kept, tr("1 choice"), tr("%1 choices"));
    const bool retried = std::exchange(m_retrying, false);
    if (!m_outOfReach || (kept > 0 && kept != m_saidKept))
        Q_EMIT statusMessage(kept > 0 ? tr("The team store cannot be reached: %1 kept here, written when it is back")
                                            .arg(choices)
                                      : tr("The team store cannot be reached (%1); trying again every %2 s")
                                            .arg(QString::fromStdString(error))
                                            .arg(kRetryMs / 1000));
    else if (retried && kept > 0) // the timer's try: said again, with what waits
        Q_EMIT statusMessage(tr("Still no team store (%1): %2 kept, trying again every %3 s")
                                 .arg(QString::fromStdString(error), choices)
                                 .arg(kRetryMs / 1000));
    m_saidKept = kept;
    m_outOfReach = true;
    if (!m_retry->isActive())
        m_retry->start();
}

void TeamLabelChannel::onSent(const OutboxReport& report)
{
    m_sending = false;
    if (!m_claiming)
        m_slow->stop();
    for (const auto& [seq, reason] : report.refused)
        Q_EMIT refused(seq, QString::fromStdString(reason));
    if (report.unreachable) {
        lost(report.error);
        return;
    }
    m_retrying = false;
    const size_t sent = report.written.size() + size_t(report.undone);
    const bool wasOut = std::exchange(m_outOfReach, false) | std::exchange(m_saidSlow, false);
    m_retry->stop();
    QString refusedText;
    if (!report.refused.empty())
        refusedText = tr("; %1 refused (%2)").arg(report.refused.size()).arg(QString::fromStdString(report.refused.front().second));
    if (wasOut) {
        Q_EMIT statusMessage(tr("The team store is back: %1 written").arg(counted(sent, tr("1 kept label"), tr("%1 kept labels"))) +
                             refusedText);
        Q_EMIT back();
    } else if (m_inherited > 0) {
        Q_EMIT statusMessage(tr("Kept from an earlier sitting: %1 written to the team store")
                                 .arg(counted(sent, tr("1 choice"), tr("%1 choices"))) +
                             refusedText);
    } else if (!report.refused.empty()) {
        Q_EMIT statusMessage(tr("Not stored: %1").arg(QString::fromStdString(report.refused.front().second)));
    }
    m_inherited = 0;
    if (sent > 0)
        Q_EMIT written();
    if (m_sendAgain || report.pending > 0)
        send();
}

void TeamLabelChannel::onClaimed(const TeamClaim& claim)
{
    m_claiming = false;
    if (!m_sending)
        m_slow->stop();
    if (claim.unreachable)
        lost(claim.error);
    else if (!claim.error.empty())
        Q_EMIT statusMessage(tr("Error: %1").arg(QString::fromStdString(claim.error)));
    Q_EMIT claimed(claim);
}

void TeamLabelChannel::onCountsRead(const TeamCounts& counts)
{
    m_reading = false;
    if (counts.unreachable) {
        lost(counts.error); // the worker reads again after its next send that reaches the server
        Q_EMIT countsRead(counts);
        return;
    }
    if (m_readAgain)
        readCounts(m_countsTask, m_countsOthers);
    Q_EMIT countsRead(counts);
}

} // namespace d2dpo::ui
