// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/models/modelexporter.h"
#include "ui/common/longjobs.h"

#include <QElapsedTimer>
#include <QtConcurrent/QtConcurrentRun>

#include "base/safeoutput.h"
#include "base/timeutil.h"
#include "jobs/exportoptions.h"

namespace d2dpo::ui {

ModelExporter::ModelExporter(PreferenceStore& store, QObject* parent)
    : QObject(parent)
    , m_store(store)
    , m_watcher(new QFutureWatcher<Status>(this))
{
    connect(m_watcher, &QFutureWatcherBase::finished, this, [this] {
        const Status s = m_watcher->result();
        const bool cancelled = !s && s.error() == kExportStopped;
        Q_EMIT finished(m_folder, s.ok(), s ? QString() : QString::fromStdString(s.error()), cancelled);
    });
}

ModelExporter::~ModelExporter()
{
    cancel();
    m_watcher->waitForFinished();
}

bool ModelExporter::running() const { return m_watcher->isRunning(); }

void ModelExporter::cancel()
{
    if (m_stop)
        m_stop->requestStop();
}

ExportOptions ModelExporter::optionsFor(const ModelRecord& model) const
{
    ExportOptions options = exportOptionsFor(m_store, model);
    options.inputs = storeFiles(m_store.path()); // never written over, whatever folder is chosen
    return options;
}

Status ModelExporter::exportModel(const ModelRecord& model, const QString& folder) const
{
    return statusOf(exportCheckpointFile(model.path, folder.toStdString(), optionsFor(model)));
}

bool ModelExporter::start(const ModelRecord& model, const QString& folder)
{
    if (running())
        return false;
    ExportOptions options = optionsFor(model);
    m_stop = std::make_shared<StopToken>();
    options.stop = m_stop.get();
    // Called on the export's thread: the signal is queued to the window's.
    auto clock = std::make_shared<QElapsedTimer>();
    clock->start();
    options.progress = [this, clock](double done, int64_t total) {
        Q_EMIT progress(done, qint64(total), secondsLeft(double(clock->elapsed()) / 1000.0, done, total));
    };
    const std::string path = model.path;
    m_folder = folder;
    m_watcher->setFuture(QtConcurrent::run(longJobPool(), [path, options, stop = m_stop, target = folder.toStdString()] {
        return statusOf(exportCheckpointFile(path, target, options));
    }));
    return true;
}

} // namespace d2dpo::ui
