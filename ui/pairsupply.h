// SPDX-License-Identifier: GPL-3.0-or-later
// Generates pairs to label in the background (never in the GUI thread): loads the model once,
// draws candidates, forms pairs of distinct sequences; the result arrives in the GUI thread
// through a QFutureWatcher owned by this object, so it dies with its owner.
#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "store/preferencestore.h"

namespace d2dpo {
class PairGenerator;
}

namespace d2dpo::ui {

struct PairSupplyResult {
    QString error;               ///< empty on success
    ModelRecord model;
    std::vector<ShownPair> pairs;
    qint64 candidates = 0;
    qint64 milliseconds = 0;
};

class PairSupply final : public QObject {
    Q_OBJECT

public:
    explicit PairSupply(QObject* parent = nullptr);
    ~PairSupply() override;

    bool busy() const;
    /// Starts generating `count` pairs from the checkpoint at `checkpointPath`; ignored while busy.
    bool request(const QString& checkpointPath, int count, quint64 seed);
    /// Blocks until the job in flight (if any) has finished (used on shutdown and in tests).
    void waitForIdle();

Q_SIGNALS:
    void started(int count);
    void finished(const d2dpo::ui::PairSupplyResult& result);

private:
    std::shared_ptr<PairGenerator> generatorFor(const std::string& path, QString& error);

    QFutureWatcher<PairSupplyResult> m_watcher;
    std::mutex m_cacheMutex;
    std::map<std::string, std::shared_ptr<PairGenerator>> m_cache;
};

} // namespace d2dpo::ui
