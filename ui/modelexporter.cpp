// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/modelexporter.h"
#include "ui/longjobs.h"

#include <QtConcurrent/QtConcurrentRun>

#include "base/safeoutput.h"
#include "jobs/exportoptions.h"

namespace d2dpo::ui {

ModelExporter::ModelExporter(PreferenceStore& store, QObject* parent)
    : QObject(parent)
    , m_store(store)
    , m_watcher(new QFutureWatcher<Status>(this))
{
    connect(m_watcher, &QFutureWatcherBase::finished, this, [this] {
        const Status s = m_watcher->result();
        Q_EMIT finished(m_folder, s.ok(), s ? QString() : QString::fromStdString(s.error()));
    });
}

ModelExporter::~ModelExporter() { m_watcher->waitForFinished(); }

bool ModelExporter::running() const { return m_watcher->isRunning(); }

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
    const ExportOptions options = optionsFor(model);
    const std::string path = model.path;
    m_folder = folder;
    m_watcher->setFuture(QtConcurrent::run(longJobPool(),
        [path, options, target = folder.toStdString()] {
            return statusOf(exportCheckpointFile(path, target, options));
        }));
    return true;
}

} // namespace d2dpo::ui
