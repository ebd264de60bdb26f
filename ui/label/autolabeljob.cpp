// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/label/autolabeljob.h"

#include <QtConcurrent/QtConcurrentRun>

#include "ui/common/longjobs.h"
#include "ui/common/ownconnection.h"

namespace d2dpo::ui {

AutoLabelJob::AutoLabelJob(const std::string& storeUrl, QObject* parent)
    : QObject(parent)
    , m_connection(std::make_shared<OwnConnection>(storeUrl))
    , m_planning(new QFutureWatcher<Planned>(this))
    , m_writing(new QFutureWatcher<RuleLabelOutcome>(this))
{
    connect(m_planning, &QFutureWatcherBase::finished, this, &AutoLabelJob::onPlanned);
    connect(m_writing, &QFutureWatcherBase::finished, this, &AutoLabelJob::onWritten);
}

bool AutoLabelJob::start(QWidget* dialogParent, std::function<bool(int)> confirm)
{
    if (m_busy)
        return false;
    m_busy = true;
    m_dialogParent = dialogParent;
    m_confirm = std::move(confirm);
    // The tasks hold the connection (shared), never this job: one still on its way when the view
    // closes ends on its own.
    m_planning->setFuture(QtConcurrent::run(storeReadPool(), [connection = m_connection]() -> Planned {
        Planned planned;
        auto store = connection->get();
        if (!store) {
            planned.error = store.error();
            return planned;
        }
        auto pending = store.value()->pendingPairs(10'000'000);
        if (!pending) {
            planned.error = pending.error();
            return planned;
        }
        TaskCatalog tasks(*store.value()); // each pending pair's task, read here
        planned.plan = RuleLabeler(tasks).plan(pending.value());
        return planned;
    }));
    return true;
}

void AutoLabelJob::onPlanned()
{
    const Planned planned = m_planning->result();
    if (!planned.error.empty()) {
        m_busy = false;
        Q_EMIT finished({QString::fromStdString(planned.error), true, false}, {});
        return;
    }
    if (planned.plan.labels.empty()) {
        m_busy = false;
        Q_EMIT finished({noRuleToLabelText(), false, false}, {});
        return;
    }
    const int count = int(planned.plan.labels.size());
    if (!(m_confirm ? m_confirm(count) : confirmAutoLabel(m_dialogParent, planned.plan))) {
        m_busy = false;
        Q_EMIT finished({}, {});
        return;
    }
    m_plan = planned.plan;
    m_writing->setFuture(QtConcurrent::run(storeReadPool(), [connection = m_connection, plan = m_plan] {
        auto store = connection->get();
        if (!store) {
            RuleLabelOutcome failed;
            failed.error = store.error();
            return failed;
        }
        TaskCatalog tasks(*store.value());
        return RuleLabeler(tasks).apply(*store.value(), plan);
    }));
}

void AutoLabelJob::onWritten()
{
    m_busy = false;
    // Applied even when it stopped early (the summary says why): the labels before it are stored.
    const RuleLabelOutcome outcome = m_writing->result();
    Q_EMIT finished({autoLabelSummary(m_plan, outcome), false, true}, outcome);
}

} // namespace d2dpo::ui
