// SPDX-License-Identifier: GPL-3.0-or-later
// Generates pairs to label in the background (never in the GUI thread): loads the model once,
// draws candidates, forms pairs of distinct sequences (least sure or surest first: several times as
// many, scored against the model's reference, those kept: jobs/pairscorer.h); the result
// arrives in the GUI thread through a QFutureWatcher owned by this object, so it dies with its owner.
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

struct PairSupplyResult {
    QString error;               ///< empty on success
    ModelRecord model;
    std::vector<ShownPair> pairs;
    qint64 candidates = 0;
    qint64 milliseconds = 0;
    QString sampling;            ///< how the pairs were drawn, when the supply chose it ("confident sampler, ...")
    std::vector<double> margins; ///< picked by margin: one per pair, else empty
    std::string scoredBy;        ///< the model whose margins they are
    double candidatesMeanAbs = 0;
};

/// Pairs picked by the model's margins (jobs/pairscorer.h): which ones, the checkpoint the margins
/// are measured against (the model it was fine-tuned from; its own path for a pretrained one) and
/// the candidate pairs drawn per pair kept.
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
    /// Starts generating `count` pairs from the checkpoint at `checkpointPath`, the least sure (or
    /// surest) of more when `byMargin` is given; ignored while busy.
    bool request(const QString& checkpointPath, int count, quint64 seed,
                 const std::optional<MarginRequest>& byMargin = std::nullopt);
    /// Blocks until the job in flight (if any) has finished (used on shutdown and in tests).
    void waitForIdle();

Q_SIGNALS:
    void started(int count);
    /// `done` of `total` sequences drawn; `secondsLeft` < 0 until the rate is known.
    void progress(qint64 done, qint64 total, double secondsLeft);
    void finished(const d2dpo::ui::PairSupplyResult& result);

private:
    std::shared_ptr<PairGenerator> generatorFor(const std::string& path, QString& error);
    std::shared_ptr<PairScorer> scorerFor(const std::string& path, const std::string& reference, QString& error);

    QFutureWatcher<PairSupplyResult> m_watcher;
    std::mutex m_cacheMutex;
    std::map<std::string, std::shared_ptr<PairGenerator>> m_cache;
    std::map<std::pair<std::string, std::string>, std::shared_ptr<PairScorer>> m_scorers;
};

} // namespace d2dpo::ui
