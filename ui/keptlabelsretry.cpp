// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/keptlabelsretry.h"

#include <QTimer>

#include "labeling/labelsession.h"

namespace d2dpo::ui {

namespace {
QString counted(int n, const QString& one, const QString& many) { return n == 1 ? one : many.arg(n); }
} // namespace

KeptLabelsRetry::KeptLabelsRetry(LabelSession& session, QObject* parent)
    : QObject(parent), m_session(session), m_timer(new QTimer(this))
{
    m_timer->setInterval(kRetryMs);
    connect(m_timer, &QTimer::timeout, this, &KeptLabelsRetry::retry);
}

bool KeptLabelsRetry::waiting() const { return m_session.unsentCount() > 0; }

void KeptLabelsRetry::afterLabel(bool kept, int keptWritten, const std::vector<std::string>& keptRefused)
{
    if (keptWritten > 0 || !keptRefused.empty())
        report(keptWritten, keptRefused);
    if (kept) {
        const int n = int(m_session.unsentCount());
        Q_EMIT statusMessage(tr("The team store cannot be reached: %1 kept here, written when it is back")
                                 .arg(counted(n, tr("1 choice"), tr("%1 choices"))));
        m_timer->start();
    } else if (!waiting()) {
        m_timer->stop();
    }
}

void KeptLabelsRetry::retry()
{
    if (!waiting()) {
        m_timer->stop();
        return;
    }
    auto flushed = m_session.flushUnsent();
    if (!flushed) {
        const int n = int(m_session.unsentCount());
        Q_EMIT statusMessage(tr("Still no team store (%1): %2 kept, trying again every %3 s")
                                 .arg(QString::fromStdString(flushed.error()), counted(n, tr("1 choice"), tr("%1 choices")))
                                 .arg(kRetryMs / 1000));
        return;
    }
    m_timer->stop();
    report(flushed->written, flushed->refused);
    Q_EMIT written();
}

void KeptLabelsRetry::report(int written, const std::vector<std::string>& refused)
{
    QString message = tr("The team store is back: %1 written")
                          .arg(counted(written, tr("1 kept label"), tr("%1 kept labels")));
    if (!refused.empty())
        message += tr("; %1 refused (%2)").arg(int(refused.size())).arg(QString::fromStdString(refused.front()));
    Q_EMIT statusMessage(message);
}

} // namespace d2dpo::ui
