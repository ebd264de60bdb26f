// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/pairsupply.h"

#include <QElapsedTimer>
#include <QtConcurrent/QtConcurrentRun>

#include "jobs/pairgenerator.h"

namespace d2dpo::ui {

PairSupply::PairSupply(QObject* parent) : QObject(parent)
{
    connect(&m_watcher, &QFutureWatcher<PairSupplyResult>::finished, this,
            [this] { Q_EMIT finished(m_watcher.result()); });
}

PairSupply::~PairSupply() { waitForIdle(); }

bool PairSupply::busy() const { return m_watcher.isRunning(); }

void PairSupply::waitForIdle() { m_watcher.waitForFinished(); }

std::shared_ptr<PairGenerator> PairSupply::generatorFor(const std::string& path, QString& error)
{
    std::lock_guard lock(m_cacheMutex);
    if (auto it = m_cache.find(path); it != m_cache.end())
        return it->second;
    auto loaded = PairGenerator::load(path, "auto");
    if (!loaded) {
        error = QString::fromStdString(loaded.error());
        return nullptr;
    }
    std::shared_ptr<PairGenerator> generator(std::move(loaded.value()));
    m_cache.emplace(path, generator);
    return generator;
}

bool PairSupply::request(const QString& checkpointPath, int count, quint64 seed)
{
    if (busy())
        return false;
    Q_EMIT started(count);
    const std::string path = checkpointPath.toStdString();
    m_watcher.setFuture(QtConcurrent::run([this, path, count, seed]() -> PairSupplyResult {
        QElapsedTimer timer;
        timer.start();
        PairSupplyResult result;
        auto generator = generatorFor(path, result.error);
        if (!generator)
            return result;
        auto batch = generator->generate(count, seed);
        if (!batch) {
            result.error = QString::fromStdString(batch.error());
            return result;
        }
        result.model = generator->model();
        result.pairs = std::move(batch->pairs);
        result.candidates = batch->candidates;
        result.milliseconds = timer.elapsed();
        return result;
    }));
    return true;
}

} // namespace d2dpo::ui
