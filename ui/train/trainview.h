// SPDX-License-Identifier: GPL-3.0-or-later
// The Train view, which composes the run: the reference model and the preferences
// (TrainDataPanel), the D2-DPO settings (TrainSettingsForm), Start and Stop. Training runs in a
// worker thread (TrainRunner); the view shows a progress bar with steps/s and ETA, the four live
// plots (TrainPlots), an event log and the past runs in the store (RunHistory), whose curves can
// be shown again.
#pragma once

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QString>
#include <QWidget>

#include <memory>
#include <string>

#include "jobs/dpojob.h"
#include "store/preferencestore.h"
#include "ui/train/storedrun.h"
#include "ui/train/traintypes.h"

class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;

namespace d2dpo::ui {

class MetricPlot;
class RunHistory;
class TrainDataPanel;
class TrainPlots;
class TrainRunner;
class TrainSettingsForm;

class TrainView final : public QWidget {
    Q_OBJECT

public:
    explicit TrainView(PreferenceStore& store, QWidget* parent = nullptr);
    ~TrainView() override;

    /// Reloads the models, the pair count and the past runs from the store: at once the first
    /// time (as the view is made), in the background every later time.
    void reload();
    /// Selects the reference model by its store id.
    bool selectReference(const QString& modelId);
    void useRulePairs(bool rulePairs, int count = 20000);
    /// The reference and preferences box (the source of the pairs, measured ones too).
    TrainDataPanel* dataPanel() const { return m_data; }

    TrainSettingsForm* settingsForm() const { return m_form; }
    TrainRunner& runner() const { return *m_runner; }
    bool training() const;
    /// Pairs the chosen source gives for the chosen model (0 when none or not usable).
    qint64 pairCount() const;

    MetricPlot* lossPlot() const;
    MetricPlot* samplePlot() const;
    MetricPlot* accuracyPlot() const;
    MetricPlot* rewardPlot() const;
    QString logText() const;
    /// Stops a run and waits for it (closing the window).
    void shutdown();

public Q_SLOTS:
    /// Starts a run with the form's settings; false (with the reason in the log) when it cannot.
    bool start();
    void stop();
    /// Continues a stopped or interrupted run from its last checkpoint (its curves go on). On a
    /// team store its settings and curves are read off the window's thread first and the run
    /// starts when they land; false when a run is on or being resumed.
    bool resume(qint64 runId);
    /// Shows the stored curves of a past run (`quiet`: without a line in the log), read in the
    /// background; one running in another process is followed as it trains.
    void showRun(qint64 runId, bool quiet = false);
    /// Clears the plots when the run on them is of another reference than the one now chosen.
    void forgetRunOfAnotherReference();

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
    /// Starts `job` in the worker thread; its outcome comes back to onFinished().
    void startJob(const DpoJobSpec& job);
    QWidget* buildControls();
    /// Start, Stop, the progress bar and the rate line: kept in view under the scrolling settings.
    QWidget* buildRunBar(QWidget* parent);
    QWidget* buildPlots();
    void updateStartEnabled();
    void setRunning(bool running);
    void reloadRuns();
    /// On a team store, keeps the run list and a run of another machine up to date (trainviewruns.cpp).
    void followRuns();
    /// Draws a run read by readStoredRun (the background read's end, or resume's own read).
    void applyStoredRun(const StoredRun& stored, bool quiet);
    /// Starts the resumed run `runId` from its job's settings and its stored curves (read before
    /// its first step can arrive: the steps go on from them).
    bool resumeWith(qint64 runId, const Result<DpoJobSpec>& job, const StoredRun& stored);

    PreferenceStore& m_store;
    TrainRunner* m_runner = nullptr;
    TrainDataPanel* m_data = nullptr;
    TrainSettingsForm* m_form = nullptr;
    QPushButton* m_start = nullptr;
    QPushButton* m_stop = nullptr;
    QProgressBar* m_progress = nullptr;
    class RunAdvice* m_advice = nullptr;
    QLabel* m_rate = nullptr;
    QString m_phase; ///< the phase between steps being said ("Measuring the reference on 400 samples")
    QElapsedTimer m_phaseClock; ///< since it began
    QLabel* m_banner = nullptr;
    RunHistory* m_runs = nullptr;
    QPlainTextEdit* m_log = nullptr;
    TrainPlots* m_plots = nullptr;
    class LiveRunFollower* m_follower = nullptr;
    /// Past runs are read on a connection of their own, off the window's thread.
    std::shared_ptr<class OwnConnection> m_runReader;
    QFutureWatcher<StoredRun>* m_storedRun = nullptr;
    qint64 m_wantedRun = 0;   ///< the run asked for last: an older read that ends later is dropped
    bool m_wantedQuiet = false;
    std::string m_wantedUnder; ///< the reference selected when it was asked for
    quint64 m_runRequests = 0; ///< requests so far, and the one the read on its way answers
    quint64 m_readRequest = 0;
    std::string m_shownReference; ///< the reference model of the run on the plots
    bool m_listed = false;        ///< the first lists were read
    bool m_resuming = false;      ///< a team store's run to resume is being read
    /// The job in flight: its run lock file (how the run history knows this window's own run) and
    /// its outcome, written by the worker before it reports the end.
    std::string m_ownLockPath;
    std::shared_ptr<DpoJobOutcome> m_outcome;
};

} // namespace d2dpo::ui
