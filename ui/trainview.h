// The Train view: pick the reference model and the preferences (the experts' labels, or
// rule-made pairs for the paper's experiment) and see how many pairs that is; set D2-DPO up;
// Start and Stop. Training runs in a worker thread (TrainRunner); the view shows a progress bar
// with steps/s and ETA, four live plots (loss; odd ratio and VSR against the reference's;
// reward accuracy and margin; chosen and rejected rewards), an event log, and the past runs
// recorded in the store, whose curves can be shown again.
#pragma once

#include <QWidget>

#include <optional>

#include "preferencestore.h"
#include "traintypes.h"

class QButtonGroup;
class QComboBox;
class QLabel;
class QListWidget;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QRadioButton;
class QSpinBox;

namespace d2dpo::ui {

class MetricPlot;
class TrainRunner;
class TrainSettingsForm;

class TrainView final : public QWidget {
    Q_OBJECT

public:
    explicit TrainView(PreferenceStore& store, QWidget* parent = nullptr);
    ~TrainView() override;

    /// Reloads the models, the pair count and the past runs from the store.
    void reload();
    /// Selects the reference model by its store id.
    bool selectReference(const QString& modelId);
    void useRulePairs(bool rulePairs, int count = 20000);

    TrainSettingsForm* settingsForm() const { return m_form; }
    TrainRunner& runner() const { return *m_runner; }
    bool training() const;
    /// Pairs the chosen source gives for the chosen model (0 when none or not usable).
    qint64 pairCount() const { return m_pairCount; }

    MetricPlot* lossPlot() const { return m_lossPlot; }
    MetricPlot* samplePlot() const { return m_samplePlot; }
    MetricPlot* accuracyPlot() const { return m_accuracyPlot; }
    MetricPlot* rewardPlot() const { return m_rewardPlot; }
    QString logText() const;
    /// Stops a run and waits for it (closing the window).
    void shutdown();

public Q_SLOTS:
    /// Starts a run with the form's settings; false (with the reason in the log) when it cannot.
    bool start();
    void stop();
    /// Shows the stored curves of a past run.
    void showRun(qint64 runId);

    // The worker's events, also fed directly by tests.
    void onProgress(const d2dpo::ProgressEvent& event);
    void onEvaluation(const d2dpo::EvaluationEvent& event);
    void onFinished(const d2dpo::FinishedEvent& event);
    void appendLog(const QString& line);

Q_SIGNALS:
    void statusMessage(const QString& message);
    /// A run ended (any status); the store has its record and, if any, its fine-tuned model.
    void runFinished(d2dpo::RunStatus status);

private:
    QWidget* buildControls();
    QWidget* buildPlots();
    void updatePairCount();
    void updateStartEnabled();
    void setRunning(bool running);
    void clearPlots();
    /// The loss and its moving average.
    void appendLoss(int64_t step, double loss);
    /// The plots' x axes span the run's steps.
    void setStepRange(int64_t steps);
    void reloadRuns();
    std::optional<ModelRecord> selectedModel() const;

    PreferenceStore& m_store;
    TrainRunner* m_runner = nullptr;
    TrainSettingsForm* m_form = nullptr;
    QComboBox* m_reference = nullptr;
    QRadioButton* m_fromLabels = nullptr;
    QRadioButton* m_fromRule = nullptr;
    QSpinBox* m_rulePairs = nullptr;
    QLabel* m_pairSummary = nullptr;
    QPushButton* m_start = nullptr;
    QPushButton* m_stop = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_rate = nullptr;
    QLabel* m_banner = nullptr;
    QListWidget* m_runs = nullptr;
    QPlainTextEdit* m_log = nullptr;
    MetricPlot* m_lossPlot = nullptr;
    MetricPlot* m_samplePlot = nullptr;
    MetricPlot* m_accuracyPlot = nullptr;
    MetricPlot* m_rewardPlot = nullptr;
    qint64 m_pairCount = 0;
    double m_lossAverage = 0;
    bool m_haveAverage = false;
    qint64 m_shownRun = 0;
};

} // namespace d2dpo::ui
