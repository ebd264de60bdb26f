// SPDX-License-Identifier: GPL-3.0-or-later
// The store's models, read on the long-job pool through a connection of its own: a view that
// lists them again (a tab shown, a model added) never waits on a team store's server.
#pragma once

#include <QFutureWatcher>
#include <QObject>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "store/records.h"

namespace d2dpo {
class PreferenceStore;
}

namespace d2dpo::ui {

class OwnConnection;

/// A run that made a listed model, as the details say it: its record and its last step.
struct RunBrief {
    RunRecord record;
    int64_t lastStep = 0;
};

struct ModelList {
    bool ok = false;
    std::vector<ModelRecord> models;
    std::map<int64_t, RunBrief> runs; ///< by run id; read only in the background (withRuns)
    std::string error;
};

class ModelListReader final : public QObject {
    Q_OBJECT

public:
    /// Reads the store at `storePath` (a file or a team store's URL).
    explicit ModelListReader(const std::string& storePath, QObject* parent = nullptr);

    /// Starts a read; `ready` brings its list. Asked again while one is on its way, it reads once
    /// more after it (the list may have changed since that one began).
    void read();
    bool reading() const { return m_watcher->isRunning(); }
    /// The same read on the calling thread, through `store`; `withRuns`: the runs that made the
    /// models too (a read of the runs and one of each run's loss), as the background read does.
    static ModelList readNow(PreferenceStore& store, bool withRuns = false);

Q_SIGNALS:
    void ready(const d2dpo::ui::ModelList& list);

private:
    std::shared_ptr<OwnConnection> m_connection;
    QFutureWatcher<ModelList>* m_watcher = nullptr;
    bool m_again = false;
};

} // namespace d2dpo::ui
