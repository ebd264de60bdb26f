// SPDX-License-Identifier: GPL-3.0-or-later
// The Models view's held-out figures: how the selected model and its reference rank measured
// values neither trained on (jobs/assayeval.h). For a model trained on measurements, its run's
// assay and split are preset, so "before and after" is one click: Spearman and the share of
// held-out pairs ordered as measured, by the likelihood bound for both models and by the implicit
// reward for the fine-tuned one. Scored in the background; figures kept per model and split
// while the view lives.
#pragma once

#include <QFutureWatcher>
#include <QHash>
#include <QStringList>
#include <QWidget>

#include <memory>
#include <optional>

#include "base/result.h"
#include "jobs/assayeval.h"
#include "store/records.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QTableWidget;

namespace d2dpo {
class PreferenceStore;
}

namespace d2dpo::ui {

class HeldOutPanel final : public QWidget {
    Q_OBJECT

public:
    explicit HeldOutPanel(PreferenceStore& store, QWidget* parent = nullptr);
    ~HeldOutPanel() override; ///< waits for a scoring on its way

    /// Shows `model`'s figures when they were scored, with its run's assay and split preset (read
    /// in the background; presetShown() follows).
    void showModel(const ModelRecord& model);
    /// Scores the shown model on the chosen split in the background; scored() follows.
    void score();
    bool scoring() const { return m_watcher->isRunning(); }
    QTableWidget* table() const { return m_table; }
    QString statusText() const;

Q_SIGNALS:
    void scored(bool ok);
    /// showModel()'s read landed: the assays and the run's split are shown.
    void presetShown();

private:
    /// What showModel() reads off the window's thread (a team store's server may stop answering):
    /// the assays of the model's task and the split its run trained with.
    struct Preset {
        QString modelId;
        QStringList assays;
        std::optional<AssayPairsSpec> trained;
        QString error;
    };
    void showPreset(const Preset& preset);
    AssayEvalSpec chosenSpec() const;
    QString key(const AssayEvalSpec& spec) const;
    void showResult(const AssayEvalResult& result);

    PreferenceStore& m_store;
    std::optional<ModelRecord> m_model;
    QComboBox* m_assay = nullptr;
    QDoubleSpinBox* m_heldOut = nullptr;
    QComboBox* m_split = nullptr;
    QPushButton* m_score = nullptr;
    QLabel* m_status = nullptr;
    QTableWidget* m_table = nullptr;
    QFutureWatcher<Result<AssayEvalResult>>* m_watcher = nullptr;
    QFutureWatcher<Preset>* m_reading = nullptr;
    std::shared_ptr<class OwnConnection> m_reader;
    QString m_scoringKey;
    QHash<QString, AssayEvalResult> m_results; ///< by model and split
};

} // namespace d2dpo::ui
