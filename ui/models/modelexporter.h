// SPDX-License-Identifier: GPL-3.0-or-later
// Writes a model's export folder (weights.pt, model_card.json, samples.txt; see jobs/exporter.h)
// with the card's lineage, the run that made the model and its preference counts, read from the
// store. Blocking, or in the background through a QFutureWatcher it owns (the Export… button),
// with the samples' draw reported per pass and a Cancel that writes nothing; destroying it stops
// and waits for a background export.
#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <memory>

#include "jobs/exporter.h"
#include "store/preferencestore.h"

namespace d2dpo::ui {

class ModelExporter final : public QObject {
    Q_OBJECT

public:
    explicit ModelExporter(PreferenceStore& store, QObject* parent = nullptr);
    ~ModelExporter() override;

    /// Writes the model's export folder now.
    Status exportModel(const ModelRecord& model, const QString& folder) const;
    /// Starts writing the folder in the background; false while another export runs.
    bool start(const ModelRecord& model, const QString& folder);
    bool running() const;
    /// Stops a background export before it writes anything (finished() follows, `cancelled`).
    void cancel();

Q_SIGNALS:
    /// A background export's samples: `done` of `total` drawn, `secondsLeft` < 0 while unknown.
    void progress(double done, qint64 total, double secondsLeft);
    /// A background export ended; `error` says why when it failed; `cancelled` when cancel()
    /// stopped it and nothing was written.
    void finished(const QString& folder, bool ok, const QString& error, bool cancelled);

private:
    /// The model card's run and preference counts, from the run that made the model.
    ExportOptions optionsFor(const ModelRecord& model) const;

    PreferenceStore& m_store;
    QFutureWatcher<Status>* m_watcher = nullptr;
    QString m_folder;
    std::shared_ptr<StopToken> m_stop; ///< the running export's; shared with its thread
};

} // namespace d2dpo::ui
