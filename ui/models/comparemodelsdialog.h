// SPDX-License-Identifier: GPL-3.0-or-later
// "Compare models…" (Models view): a blind comparison of models of one task. The user ticks the
// models (the selected one and its reference come ticked) and the pairs for each two; the
// checkpoints are loaded and the pairs drawn in the background (jobs/comparisonpairs.h), then the
// models and the comparison are recorded, its pairs in every labeler's queue, sides random and
// the models never named on the Label view. The bar moves per pass of a model with the time left;
// Cancel stops the draw within a pass; nothing is stored until it is whole. Errors show in the dialog.
#pragma once

#include <QDialog>
#include <QElapsedTimer>
#include <QFutureWatcher>

#include <atomic>
#include <memory>
#include <vector>

#include "jobs/comparisonpairs.h"
#include "store/preferencestore.h"

class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTimer;

namespace d2dpo::ui {

/// How far the background draw is (written by its thread, read by the dialog's timer).
struct ComparisonDrawProgress;

/// What the background draw hands back (plain data: the GUI thread stores it).
struct ComparisonDrawResult {
    QString error;
    PreparedComparison prepared; ///< empty when cancelled
    int64_t storedId = 0; ///< a team store's comparison, stored by the draw itself
};

class CompareModelsDialog final : public QDialog {
    Q_OBJECT

public:
    /// Lists the models of `selectedModelId`'s task, that model and its reference ticked.
    CompareModelsDialog(PreferenceStore& store, const QString& selectedModelId, QWidget* parent = nullptr);
    ~CompareModelsDialog() override;

    /// The ids of the ticked models.
    QStringList tickedModels() const;
    void setTicked(const QString& modelId, bool ticked);
    void setPairsPerTwoModels(int count);
    /// Starts the draw (what Start does); false, with the reason shown, when it cannot start.
    bool start();
    /// Stops waiting for the draw in flight; nothing is stored.
    void cancel();
    bool busy() const { return m_running; }
    QString lastError() const { return m_error; }
    /// The comparison this dialog created, or 0.
    qint64 createdComparison() const { return m_created; }

Q_SIGNALS:
    void comparisonCreated(qint64 comparisonId);

protected:
    void reject() override;

private:
    /// Lists the store's models (a team store's read in the background).
    void listModels(const QString& selectedModelId);
    /// Lists those of `selectedModelId`'s task (else the newest model's), it and its reference ticked.
    void showModels(const std::vector<ModelRecord>& models, const QString& selectedModelId);
    void updateSummary();
    void setRunning(bool running);
    void finishDraw(const ComparisonDrawResult& result);
    void showError(const QString& message);
    void showProgress();

    PreferenceStore& m_store;
    QString m_task;
    bool m_running = false;
    QString m_error;
    qint64 m_created = 0;
    std::shared_ptr<StopToken> m_stop;                  ///< the running draw's
    std::shared_ptr<ComparisonDrawProgress> m_progress; ///< the running draw's
    QElapsedTimer m_clock;
    QTimer* m_poll = nullptr;

    QListWidget* m_models = nullptr;
    QSpinBox* m_count = nullptr;
    QLabel* m_summary = nullptr;
    QProgressBar* m_busy = nullptr;
    QLabel* m_state = nullptr;
    QPushButton* m_start = nullptr;
    QPushButton* m_cancel = nullptr;
    QFutureWatcher<ComparisonDrawResult>* m_watcher = nullptr;
};

} // namespace d2dpo::ui
