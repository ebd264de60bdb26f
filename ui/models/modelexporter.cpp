// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/models/modelexporter.h"
#include "ui/common/longjobs.h"

#include <QElapsedTimer>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

#include "base/safeoutput.h"
#include "base/timeutil.h"
#include "jobs/exportoptions.h"

namespace d2dpo::ui {

ModelExporter::ModelExporter(PreferenceStore& store, QObject* parent)
    : QObject(parent)
    , m_store(store)
    , m_watcher(new QFutureWatcher<Result<ExportReport>>(this))
{
    connect(m_watcher, &QFutureWatcherBase::finished, this, [this] {
        const Result<ExportReport> r = m_watcher->result();
        if (!r) {
            Q_EMIT finished(m_folder, false, QString::fromStdString(r.error()), r.error() == kExportStopped, {});
            return;
        }
        const QString samples = r->samplesStopped ? tr("samples skipped")
                                : r->samples > 0  ? tr("%n samples", nullptr, int(r->samples))
                                                  : tr("no samples");
        Q_EMIT finished(m_folder, true, {}, false, samples);
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

bool ModelExporter::start(const ModelRecord& model, const QString& folder, const ExportSamples& samples)
{
    if (running())
        return false;
    ExportOptions options = optionsFor(model);
    options.sampleCount = std::max<qint64>(0, samples.most);
    options.sampleSeconds = std::max(0.0, samples.seconds);
    options.samplesPlanned = [this](const std::string& plan) { Q_EMIT samplesPlanned(QString::fromStdString(plan)); };
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
        return exportCheckpointFile(path, target, options);
    }));
    return true;
}

} // namespace d2dpo::ui
