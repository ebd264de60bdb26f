// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/keptlabelsretry.h"

#include <QTimer>

#include "labeling/labelsession.h"

namespace d2dpo::ui {

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
        Q_EMIT statusMessage(tr("The team store cannot be reached: %n choice(s) kept here, written when it is back",
                                nullptr, int(m_session.unsentCount())));
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
        Q_EMIT statusMessage(tr("Still no team store (%1): %n choice(s) kept, trying again every %2 s", nullptr,
                                int(m_session.unsentCount()))
                                 .arg(QString::fromStdString(flushed.error()))
                                 .arg(kRetryMs / 1000));
        return;
    }
    m_timer->stop();
    report(flushed->written, flushed->refused);
    Q_EMIT written();
}

void KeptLabelsRetry::report(int written, const std::vector<std::string>& refused)
{
    QString message = tr("The team store is back: %n kept label(s) written", nullptr, written);
    if (!refused.empty())
        message += tr("; %n refused (%1)", nullptr, int(refused.size())).arg(QString::fromStdString(refused.front()));
    Q_EMIT statusMessage(message);
}

} // namespace d2dpo::ui
