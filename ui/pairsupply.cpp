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

std::shared_ptr<PairScorer> PairSupply::scorerFor(const std::string& path, const std::string& reference,
                                                  QString& error)
{
    std::lock_guard lock(m_cacheMutex);
    if (auto it = m_scorers.find({path, reference}); it != m_scorers.end())
        return it->second;
    auto loaded = PairScorer::load(path, reference, "auto");
    if (!loaded) {
        error = QString::fromStdString(loaded.error());
        return nullptr;
    }
    std::shared_ptr<PairScorer> scorer(std::move(loaded.value()));
    m_scorers.emplace(std::pair{path, reference}, scorer);
    return scorer;
}

bool PairSupply::request(const QString& checkpointPath, int count, quint64 seed,
                         const std::optional<MarginRequest>& byMargin)
{
    if (busy())
        return false;
    Q_EMIT started(count);
    const std::string path = checkpointPath.toStdString();
    const std::string reference = byMargin ? byMargin->referencePath.toStdString() : std::string();
    const int candidatesPerPair = byMargin ? byMargin->candidatesPerPair : 0;
    const PairPick pick = byMargin ? byMargin->pick : PairPick::LeastSure;
    m_watcher.setFuture(QtConcurrent::run([this, path, count, seed, reference, candidatesPerPair,
                                           pick]() -> PairSupplyResult {
        QElapsedTimer timer;
        timer.start();
        PairSupplyResult result;
        // Emitted from this worker: Qt queues it to the GUI thread (the supply outlives the job).
        const auto report = [this, &timer](int64_t done, int64_t total) {
            const double seconds = timer.elapsed() / 1000.0;
            Q_EMIT progress(done, total, done > 0 ? seconds * double(total - done) / double(done) : -1.0);
        };
        auto generator = generatorFor(path, result.error);
        if (!generator)
            return result;
        if (candidatesPerPair > 0) {
            auto scorer = scorerFor(path, reference, result.error);
            if (!scorer)
                return result;
            auto chosen = generateByMargin(*generator, *scorer, pick, count, candidatesPerPair, seed, {}, 16, report);
            if (!chosen) {
                result.error = QString::fromStdString(chosen.error());
                return result;
            }
            result.model = generator->model();
            result.pairs = std::move(chosen->pairs);
            result.margins = std::move(chosen->margins);
            result.scoredBy = chosen->scoredBy;
            result.candidates = chosen->candidates;
            result.candidatesMeanAbs = chosen->candidatesMeanAbs;
            result.milliseconds = timer.elapsed();
            return result;
        }
        // A pair within 2 s on this machine: the exact sampler where it fits, else fewer passes.
        const auto sampling = generator->samplingWithin(kSecondsPerPair);
        if (!sampling) {
            result.error = QString::fromStdString(sampling.error());
            return result;
        }
        result.sampling = QString::fromStdString(sampling->describe);
        auto batch = generator->generate(count, seed, sampling->sampling, report);
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
