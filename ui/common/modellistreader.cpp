// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/common/modellistreader.h"

#include <QtConcurrent/QtConcurrentRun>

#include "store/preferencestore.h"
#include "ui/common/longjobs.h"
#include "ui/common/ownconnection.h"

namespace d2dpo::ui {

ModelListReader::ModelListReader(const std::string& storePath, QObject* parent)
    : QObject(parent)
    , m_connection(std::make_shared<OwnConnection>(storePath))
    , m_watcher(new QFutureWatcher<ModelList>(this))
{
    connect(m_watcher, &QFutureWatcherBase::finished, this, [this] {
        const ModelList list = m_watcher->result();
        if (std::exchange(m_again, false))
            read(); // a newer list is on its way: this one may already be out of date, but shows meanwhile
        Q_EMIT ready(list);
    });
}

ModelList ModelListReader::readNow(PreferenceStore& store, bool withRuns)
{
    ModelList list;
    auto models = store.models();
    list.ok = models.ok();
    if (models)
        list.models = std::move(models.value());
    else
        list.error = models.error();
    if (!models || !withRuns)
        return list;
    auto runs = store.runs();
    if (!runs)
        return list; // the details read them when a model is chosen
    for (const RunRecord& run : runs.value())
        for (const ModelRecord& m : list.models)
            if (m.runId == run.id) {
                const auto loss = store.metricSeries(run.id, "loss");
                list.runs[run.id] = {run, loss && !loss->empty() ? loss->back().first : 0};
                break;
            }
    return list;
}

void ModelListReader::read()
{
    if (m_watcher->isRunning()) {
        m_again = true;
        return;
    }
    // The task holds the connection (shared), never this reader: a read still on its way when its
    // view closes ends on its own.
    m_watcher->setFuture(QtConcurrent::run(storeReadPool(), [connection = m_connection]() -> ModelList {
        auto store = connection->get();
        if (!store) {
            ModelList failed;
            failed.error = store.error();
            return failed;
        }
        return readNow(*store.value(), true);
    }));
}

} // namespace d2dpo::ui
