// SPDX-License-Identifier: GPL-3.0-or-later
// The Models view: the reference and every fine-tuned checkpoint in the store as a lineage tree
// (which model each was trained from, on which labels, in which run), with their metrics, a
// sample list and the histogram over the decoded integers side by side with the reference's
// (SampleHistogram). "Export…" writes the export folder of jobs/exporter.h (ModelExporter); "Label
// pairs from this model" sends new pairs from the selected model to the Label view (label, train,
// label the new model's outputs). "Compare models…" and "Comparison results…" ask the main window
// for a blind comparison of models (CompareModelsDialog) and its results (ComparisonResults).
#pragma once

#include <QHash>
#include <QWidget>

#include <map>
#include <optional>
#include <vector>

#include "base/result.h"
#include "base/samplebudget.h"
#include "facades/modelfiles.h"
#include "store/preferencestore.h"
#include "ui/common/modellistreader.h"

class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTreeWidget;

namespace d2dpo::ui {

class ModelExporter;
class ModelMeasurer;
class ModelFigures;

class ModelsView final : public QWidget {
    Q_OBJECT

public:
    explicit ModelsView(PreferenceStore& store, QWidget* parent = nullptr);
    ~ModelsView() override;

    /// Lists the store's models again: read in the background (the first list, as the view is
    /// made, at once), shown when it arrives.
    void reload();
    bool selectModel(const QString& id);
    QString selectedModelId() const;
    /// Writes the selected model's export folder (blocking; the button runs it in the background).
    Status exportSelected(const QString& folder);
    /// Samples drawn for the histogram, per model id (filled in the background).
    std::optional<ModelSummary> summary(const QString& id) const;
    QTreeWidget* tree() const { return m_tree; }
    QString detailsText() const;

    /// How many samples a model is drawn on: the count set, or with "Auto" (0) as many as fit in
    /// about kMeasurementSeconds at the model's cost (at most kMeasurementSamples).
    SampleBudget sampleBudget() const;
    /// 0: "Auto".
    void setSampleCount(int count);
    /// Stops drawing samples (the Cancel button).
    void cancelSampling();

Q_SIGNALS:
    void labelPairsFrom(const QString& checkpointPath);
    void trainFrom(const QString& modelId);
    /// "Compare models…" with this model selected (the main window opens the dialog).
    void compareModels(const QString& modelId);
    void comparisonResultsRequested();
    void statusMessage(const QString& message);
    /// A model's samples arrived (tests wait on this).
    void summaryReady(const QString& modelId);
    /// A model was renamed or deleted (the other views list the models again).
    void modelsChanged();

protected:
    void showEvent(QShowEvent* event) override;

private:
    void showSelected();
    void showModels(const struct ModelList& list);
    void requestSummaries(const std::vector<ModelRecord>& models);
    void onMeasured(const struct DrawnSamples& drawn);
    /// The tree's figure cells of every model: the view's measurement where drawn, else the
    /// recorded one, with its provenance in the tooltip (one figure per model on screen).
    void showFigures();
    void drawHistogram();
    void exportWithDialog();
    std::optional<ModelRecord> selected() const;
    std::optional<ModelRecord> referenceOf(const ModelRecord& model) const;

    PreferenceStore& m_store;
    QTreeWidget* m_tree = nullptr;
    QLabel* m_details = nullptr;
    ModelFigures* m_figures = nullptr;
    QPlainTextEdit* m_samples = nullptr;
    QPushButton* m_export = nullptr;
    QPushButton* m_label = nullptr;
    QPushButton* m_train = nullptr;
    QPushButton* m_rename = nullptr;
    QPushButton* m_delete = nullptr;
    QPushButton* m_compare = nullptr;
    QSpinBox* m_sampleCount = nullptr;
    QProgressBar* m_progress = nullptr;
    QPushButton* m_cancel = nullptr;
    QHash<QString, ModelSummary> m_summaries; ///< at the count they were drawn with (metrics.samples)
    /// The models as the last reload read them, by id: a selection, its reference and the
    /// figures of every row cost the store nothing (each read is a round trip on a team store).
    QHash<QString, ModelRecord> m_modelsById;
    /// The runs that made them, as a team store's background list read them (empty for a file:
    /// the details read the chosen model's run).
    std::map<int64_t, RunBrief> m_runBriefs;
    ModelMeasurer* m_measurer = nullptr;
    bool m_samplingCancelled = false;
    ModelExporter* m_exporter = nullptr;
    class ModelListReader* m_listReader = nullptr;
    bool m_listed = false; ///< the first list was shown
};

} // namespace d2dpo::ui
