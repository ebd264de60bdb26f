// SPDX-License-Identifier: GPL-3.0-or-later
// Writes a model's export folder (weights.pt, model_card.json, samples.txt; see jobs/exporter.h)
// with the card's lineage, the run that made the model and its preference counts, read from the
// store. Blocking, or in the background through a QFutureWatcher it owns (the Export… button):
// the model's files first, then the samples as sized (ExportSamples), their draw reported per pass;
// a stop before the files writes nothing, one during the draw skips the samples and keeps the files.
// Destroying it stops and waits for a background export.
#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <memory>

#include "jobs/exporter.h"
#include "store/preferencestore.h"

namespace d2dpo::ui {

/// The samples an export draws after the model's files (ExportOptions::sampleCount, sampleSeconds).
struct ExportSamples {
    qint64 most = 100;    ///< 0: none
    double seconds = 20;  ///< > 0: as many as fit in about this long, the fast sampler where the exact one would not fit
};

class ModelExporter final : public QObject {
    Q_OBJECT

public:
    explicit ModelExporter(PreferenceStore& store, QObject* parent = nullptr);
    ~ModelExporter() override;

    /// Writes the model's export folder now.
    Status exportModel(const ModelRecord& model, const QString& folder) const;
    /// Starts writing the folder in the background; false while another export runs.
    bool start(const ModelRecord& model, const QString& folder, const ExportSamples& samples = {});
    bool running() const;
    /// Stops a background export: before the model's files, nothing is written (finished() follows,
    /// `cancelled`); after them, the samples are skipped and the files stay.
    void cancel();

Q_SIGNALS:
    /// The model's files are written and the samples sized; `plan` says how many, how and how long.
    void samplesPlanned(const QString& plan);
    /// A background export's samples: `done` of `total` drawn, `secondsLeft` < 0 while unknown.
    void progress(double done, qint64 total, double secondsLeft);
    /// A background export ended; `error` says why when it failed; `cancelled` when cancel()
    /// stopped it and nothing was written; `samples` what became of them ("20 samples", "samples
    /// skipped", "no samples") when it did not fail.
    void finished(const QString& folder, bool ok, const QString& error, bool cancelled, const QString& samples);

private:
    /// The model card's run and preference counts, from the run that made the model.
    ExportOptions optionsFor(const ModelRecord& model) const;

    PreferenceStore& m_store;
    QFutureWatcher<Result<ExportReport>>* m_watcher = nullptr;
    QString m_folder;
    std::shared_ptr<StopToken> m_stop; ///< the running export's; shared with its thread
};

} // namespace d2dpo::ui
