// SPDX-License-Identifier: GPL-3.0-or-later
// Generates pairs to label in the background (on ui/common/longjobs.h's pool, never in the GUI thread):
// loads the model once, draws candidates, forms pairs of distinct sequences, handed over a few at a
// time as they are drawn (or, least sure or surest first, several times as many scored against the
// model's reference and those kept, all at once: jobs/pairscorer.h). The end arrives in the GUI
// thread through a QFutureWatcher owned by this object, so it dies with its owner.
#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "jobs/pairscorer.h"
#include "store/preferencestore.h"

namespace d2dpo::ui {

class OwnConnection;

struct PairSupplyResult {
    QString error;               ///< empty on success
    ModelRecord model;
    std::vector<ShownPair> pairs; ///< by margin: all of them; else those of one pairsReady(), none in finished()
    int delivered = 0;           ///< finished() of a plain request: the pairs handed over by pairsReady()
    qint64 candidates = 0;
    qint64 milliseconds = 0;
    QString sampling;            ///< how the pairs were drawn, when the supply chose it ("confident sampler, ...")
    std::vector<double> margins; ///< picked by margin: one per pair, else empty
    std::string scoredBy;        ///< the model whose margins they are
    double candidatesMeanAbs = 0;
    bool stopped = false; ///< cancel() ended the request (its pairs so far were handed over)
    bool stored = false; ///< the pairs are in the store already, with their ids (storeThrough)
    QString storedModelName; ///< then the name the store knows their model by
};

/// Pairs picked by the model's margins (jobs/pairscorer.h): which ones, the checkpoint the margins
/// are measured against (the model it was fine-tuned from; its own path for a pretrained one;
/// empty: the job asks the store it stores through) and the candidate pairs drawn per pair kept.
struct MarginRequest {
    PairPick pick = PairPick::LeastSure;
    QString referencePath;
    int candidatesPerPair = 4;
};

class PairSupply final : public QObject {
    Q_OBJECT

public:
    /// The time a drawn pair may cost (the sampler is chosen from the model's measured pass).
    static constexpr double kSecondsPerPair = 2.0;

    explicit PairSupply(QObject* parent = nullptr);
    ~PairSupply() override;

    bool busy() const;
    /// Hand a plain request's pairs over in pieces as they are drawn (the default), or all at the
    /// end (how the supply worked before; bench/labelwait.cpp measures one against the other).
    void setDeliverInPieces(bool pieces) { m_inPieces = pieces; }
    /// Starts generating `count` pairs from the checkpoint at `checkpointPath`, the least sure (or
    /// surest) of more when `byMargin` is given; ignored while busy.
    bool request(const QString& checkpointPath, int count, quint64 seed,
                 const std::optional<MarginRequest>& byMargin = std::nullopt);
    /// Blocks until the job in flight (if any) has finished (used on shutdown and in tests).
    void waitForIdle();
    /// Ends the request in flight at the model's next pass (within a pass's time, a fraction of a
    /// second at 8M parameters); the pairs already handed over stay. finished() says `stopped`.
    void cancel() { m_stop.requestStop(); }
    /// For a window that closes: cancel(), and a team store's statement in flight (storeThrough)
    /// fails at once instead of waiting on a server that hangs (the server rolls back the pairs it
    /// was writing: they were drawn, never labelled). Not undone: the supply's connection is spent.
    void abandon();
    /// From the next request on, stores the pairs itself through `connection` before handing them
    /// over (PairSupplyResult::stored), and reads a margin request's reference there: a team
    /// store's writes never hold the window's thread.
    void storeThrough(std::shared_ptr<OwnConnection> connection) { m_storeThrough = std::move(connection); }

Q_SIGNALS:
    void started(int count);
    /// `done` of `total` sequences drawn; `secondsLeft` < 0 until the rate is known.
    void progress(qint64 done, qint64 total, double secondsLeft);
    /// `done` of `total` candidate pairs scored by their margin (a margin request, once drawn).
    void scoring(qint64 done, qint64 total, double secondsLeft);
    /// Some of a plain request's pairs, as soon as they are drawn (queued to the owner's thread).
    void pairsReady(const d2dpo::ui::PairSupplyResult& piece);
    /// The request is over: a margin request's pairs, or a plain one's summary (its error, if any,
    /// after the pieces already handed over).
    void finished(const d2dpo::ui::PairSupplyResult& result);

private:
    /// A plain request's pieces: the first of one pair (on screen soonest), each next one sized
    /// from the last one's `seconds` for `size` pairs to take about kPieceSeconds, within
    /// [kSmallestPiece, kLargestPiece].
    static int nextPieceSize(int size, double seconds);
    static constexpr int kFirstPiece = 1;
    static constexpr int kSmallestPiece = 2;
    static constexpr int kLargestPiece = 10;
    static constexpr double kPieceSeconds = 2.0;
    std::shared_ptr<PairGenerator> generatorFor(const std::string& path, QString& error);
    std::shared_ptr<PairScorer> scorerFor(const std::string& path, const std::string& reference, QString& error);

    /// Stores a piece or a margin request's pairs through `store` (storeThrough); false with the
    /// error in `result` when the store refused them.
    static bool storeInto(PreferenceStore& store, PairSupplyResult& result);

    QFutureWatcher<PairSupplyResult> m_watcher;
    StopToken m_stop; ///< reset by each request, raised by cancel()
    std::shared_ptr<OwnConnection> m_storeThrough;
    bool m_inPieces = true;
    std::mutex m_cacheMutex;
    std::map<std::string, std::shared_ptr<PairGenerator>> m_cache;
    std::map<std::pair<std::string, std::string>, std::shared_ptr<PairScorer>> m_scorers;
};

} // namespace d2dpo::ui
