// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/label/pairsupply.h"
#include "ui/common/longjobs.h"

#include <algorithm>

#include <QElapsedTimer>
#include <QtConcurrent/QtConcurrentRun>

#include "base/timeutil.h"
#include "jobs/pairgenerator.h"
#include "labeling/generatedpairs.h"
#include "ui/common/ownconnection.h"

namespace d2dpo::ui {

PairSupply::PairSupply(QObject* parent) : QObject(parent)
{
    connect(&m_watcher, &QFutureWatcher<PairSupplyResult>::finished, this,
            [this] { Q_EMIT finished(m_watcher.result()); });
}

PairSupply::~PairSupply()
{
    cancel();
    waitForIdle();
}

bool PairSupply::busy() const { return m_watcher.isRunning(); }

void PairSupply::waitForIdle() { m_watcher.waitForFinished(); }

void PairSupply::abandon()
{
    cancel();
    if (m_storeThrough)
        m_storeThrough->giveUp();
}

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

int PairSupply::nextPieceSize(int size, double seconds)
{
    // About kPieceSeconds a piece: a large model's pairs two at a time, so that no piece takes
    // longer than the expert needs for the pairs already queued; a small model's up to ten at a
    // time, drawn in batches the CPU handles efficiently.
    const double perPair = seconds / std::max(1, size);
    const int fit = perPair > 0 ? int(kPieceSeconds / perPair) : kLargestPiece;
    return std::clamp(fit, kSmallestPiece, kLargestPiece);
}

bool PairSupply::storeInto(PreferenceStore& store, PairSupplyResult& result)
{
    auto stored = storeGeneratedPairs(store, result.model, result.pairs, {result.margins, result.scoredBy});
    if (!stored) {
        result.error = QString::fromStdString(stored.error());
        result.pairs.clear();
        return false;
    }
    result.pairs = std::move(stored->pairs);
    result.stored = true;
    result.storedModelName = QString::fromStdString(stored->modelName);
    return true;
}

bool PairSupply::request(const QString& checkpointPath, int count, quint64 seed,
                         const std::optional<MarginRequest>& byMargin)
{
    if (busy())
        return false;
    m_stop.reset();
    Q_EMIT started(count);
    const std::string path = checkpointPath.toStdString();
    const std::string reference = byMargin ? byMargin->referencePath.toStdString() : std::string();
    const int candidatesPerPair = byMargin ? byMargin->candidatesPerPair : 0;
    const PairPick pick = byMargin ? byMargin->pick : PairPick::LeastSure;
    const bool inPieces = m_inPieces;
    m_watcher.setFuture(QtConcurrent::run(longJobPool(), [this, path, count, seed, reference, candidatesPerPair,
                                           pick, inPieces, connection = m_storeThrough]() -> PairSupplyResult {
        QElapsedTimer timer;
        timer.start();
        PairSupplyResult result;
        PreferenceStore* store = nullptr; // where the pairs go, when the supply stores them
        if (connection) {
            auto opened = connection->get();
            if (!opened) {
                result.error = QString::fromStdString(opened.error());
                return result;
            }
            store = opened.value();
        }
        // Emitted from this worker: Qt queues it to the GUI thread (the supply outlives the job).
        qint64 lastDrawnMs = 0; // the drawing's last report: a margin request's scoring starts there
        const auto report = [this, &timer, &lastDrawnMs](int64_t done, int64_t total) {
            lastDrawnMs = timer.elapsed();
            Q_EMIT progress(done, total, secondsLeft(lastDrawnMs / 1000.0, done, total));
        };
        auto generator = generatorFor(path, result.error);
        if (!generator)
            return result;
        if (candidatesPerPair > 0) {
            std::string against = reference;
            if (against.empty() && store) {
                auto known = referencePathOf(*store, path);
                if (!known) {
                    result.error = QString::fromStdString(known.error());
                    return result;
                }
                against = known.value();
            }
            auto scorer = scorerFor(path, against, result.error);
            if (!scorer)
                return result;
            const auto scored = [this, &timer, &lastDrawnMs](int64_t done, int64_t total) {
                const double seconds = (timer.elapsed() - lastDrawnMs) / 1000.0;
                Q_EMIT scoring(done, total, secondsLeft(seconds, done, total));
            };
            auto chosen = generateByMargin(*generator, *scorer, pick, count, candidatesPerPair, seed, {}, 16, report,
                                           scored, &m_stop);
            if (!chosen) {
                result.stopped = m_stop.stopRequested();
                result.error = result.stopped ? QString() : QString::fromStdString(chosen.error());
                return result;
            }
            result.model = generator->model();
            result.pairs = std::move(chosen->pairs);
            result.margins = std::move(chosen->margins);
            result.scoredBy = chosen->scoredBy;
            result.candidates = chosen->candidates;
            result.candidatesMeanAbs = chosen->candidatesMeanAbs;
            if (store)
                storeInto(*store, result);
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
        result.model = generator->model();
        // Drawn in pieces, each handed over as soon as it is drawn: the first pairs can be on
        // screen after one pair's time, not after all of them.
        int done = 0;
        int size = kFirstPiece;
        int emptyInARow = 0;
        for (int piece = 0; done < count; ++piece) {
            if (m_stop.stopRequested()) {
                result.stopped = true;
                break;
            }
            size = inPieces ? std::min(count - done, size) : count;
            QElapsedTimer pieceTimer;
            pieceTimer.start();
            const auto pieceReport = [&](int64_t drawn, int64_t) { report(2 * done + drawn, 2 * int64_t(count)); };
            auto batch = generator->generate(size, seed + uint64_t(piece) * 0x9E3779B97F4A7C15ull, sampling->sampling,
                                             pieceReport, &m_stop);
            if (!batch && m_stop.stopRequested()) {
                result.stopped = true;
                break;
            }
            if (!batch) {
                result.error = QString::fromStdString(batch.error());
                return result;
            }
            done += size;
            result.candidates += batch->candidates;
            PairSupplyResult ready = result;
            ready.pairs = std::move(batch->pairs);
            ready.milliseconds = timer.elapsed();
            size = nextPieceSize(size, pieceTimer.elapsed() / 1000.0);
            if (ready.pairs.empty()) { // a small piece drew one sequence twice; a model that keeps
                if (++emptyInARow == 3) // drawing the same one would go on doing so
                    break;
                continue;
            }
            emptyInARow = 0;
            if (store && !storeInto(*store, ready)) {
                result.error = ready.error;
                break;
            }
            result.delivered += int(ready.pairs.size());
            Q_EMIT pairsReady(ready);
        }
        result.milliseconds = timer.elapsed();
        return result;
    }));
    return true;
}

} // namespace d2dpo::ui
