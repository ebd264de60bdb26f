// SPDX-License-Identifier: GPL-3.0-or-later
// The Label view: two sequences side by side (PairPanel); the expert picks the better one from the
// keyboard (Left/Right, 1/2, A/L; T tie; S or Space skip; Ctrl+Z undo) and the next pair appears at
// once. Every label is committed to the store as it is made. Every deliberate press counts; only a
// held key's auto-repeat and a press that lands before the new pair was painted are ignored, and
// the latter is shown. Undo takes back what this session labelled, newest first, an auto-labelled
// batch as one; it never reaches another session's or another labeler's labels. The model that
// made the pair on screen is named above it, never for a blind comparison's pair (no widget of the
// view then names a model: which one drew which side is what the comparison measures). Each pair
// is drawn in its task's alphabet; hints (what the task reads in a sequence, valid or not, the
// rule's view) can be hidden to avoid bias; the counters and statistics are below (LabelStatsBar);
// more pairs are generated from a chosen model in the background (PairSupply).
#pragma once

#include <QElapsedTimer>
#include <QWidget>

#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "jobs/pairscorer.h"
#include "labeling/labeloutbox.h"
#include "labeling/labelsession.h"
#include "labeling/taskcatalog.h"
#include "store/preferencestore.h"
#include "ui/label/labelkeys.h"
#include "ui/label/pairorigin.h"

class QCheckBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QTimer;

namespace d2dpo::ui {

class AutoLabelJob;
struct AutoLabelResult;
class LabelStatsBar;
class ModelPicker;
class NewPairsPicker;
class PairPanel;
class PairSupply;
struct PairSupplyResult;
struct TeamClaim;
struct TeamCounts;
struct TeamModels;
class TeamLabelChannel;

class LabelView final : public QWidget {
    Q_OBJECT

public:
    explicit LabelView(PreferenceStore& store, QWidget* parent = nullptr);
    ~LabelView() override;

    void setLabeler(const QString& name);
    QString labeler() const { return QString::fromStdString(m_session.labeler()); }
    /// Asked before auto-labelling `count` pending pairs with their tasks' rules; true goes ahead.
    /// The default asks with a dialog.
    void setAutoLabelConfirmation(std::function<bool(int count)> confirm) { m_confirmAutoLabel = std::move(confirm); }
    /// The keys for each choice (Settings ▸ Label keys…); the buttons show them.
    void setKeyBindings(const KeyBindings& keys);
    const KeyBindings& keyBindings() const { return m_keys; }
    /// Presses since the view was made that stored nothing: the pair was not on screen yet, or none was.
    int ignoredPresses() const { return m_ignoredPresses; }
    /// Where the pair on screen comes from, in words.
    QString provenance() const;
    /// On a team store: the line to the server that sends the choices, claims pairs and reads the
    /// counts off the window's thread (null on a store file).
    TeamLabelChannel* teamChannel() const { return m_team; }
    void setHintsVisible(bool visible);
    bool hintsVisible() const;
    /// Which new pairs to keep from now on: as drawn (nothing), or by margin (jobs/pairscorer.h).
    void setNewPairPick(std::optional<PairPick> pick);
    std::optional<PairPick> newPairPick() const;

    std::optional<ShownPair> currentPair() const { return m_session.current(); }
    int sessionCount() const { return m_session.labelledCount(); }
    PairSupply& supply() { return *m_supply; }

    /// Reloads the model list and the pending pairs from the store (a team store's model list
    /// in the background: the box changes when it lands).
    void reload();
    /// Reads the store's queue again after the pair on screen (pairs were added elsewhere: a
    /// comparison, another process).
    void requeue()
    {
        m_session.dropQueue();
        reload();
    }
    /// requeue() with the chosen model `modelId` (its task's queue): after a comparison of it.
    void requeueForModel(const QString& modelId);
    /// On a team store: chooses the model whose checkpoint is `checkpointPath` (one just made) as
    /// soon as the model list read off the window's thread holds it, with its task's queue.
    void useModelAt(const QString& checkpointPath);
    /// When the store has no pending pairs, generate some from `checkpointPath` (first run).
    void generateFrom(const QString& checkpointPath, int count = 50);
    /// Generates pairs from `checkpointPath` and shows them next, ahead of older pending pairs
    /// (the iterative loop: label the fine-tuned model's own outputs).
    void labelFrom(const QString& checkpointPath, int count = 50);

public Q_SLOTS:
    void chooseLeft() { choose(Choice::Left); }
    void chooseRight() { choose(Choice::Right); }
    void chooseTie() { choose(Choice::Tie); }
    void chooseBothBad() { choose(Choice::BothBad); }
    void skip() { choose(Choice::Skip); }
    void undo();
    /// Makes the pair on screen a gold pair whose answer is `answer` (left or right) and shows the next.
    void markGold(Choice answer);
    void generateMore();
    /// The Generate button: more pairs, or, while they are drawn, stop.
    void generateOrStop();
    void autoLabelWithRule();

Q_SIGNALS:
    void statusMessage(const QString& message);
    void labelled(qint64 pairId);
    /// A label was added or undone, or an auto-labelled batch applied (the reports read again).
    void labelsChanged();
    /// The stats bar's Labelers… button: the window opens the Labelers report.
    void labelersWanted();

protected:
    void keyPressEvent(QKeyEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    static constexpr int kPairsPerRequest = 50;
    static constexpr int kMarginCandidates = 4; ///< candidate pairs drawn per pair kept when picked by margin
    /// Reads the queue of the chosen model's task (when it changed).
    void followPickedTask();
    void choose(Choice choice);
    /// Shows the session's current pair (or why there is none).
    void showCurrent();
    /// Moves the session on, then shows its current pair.
    void showNext();
    void updateStatistics();
    /// Stores and queues drawn pairs (a piece of a request, or a margin request's all); the
    /// name the store knows their model by, or nothing after an error (reported).
    std::optional<QString> storeGenerated(const PairSupplyResult& result, LabelSession::QueuePlace place);
    /// The Generate button while pairs are drawn ("Stop drawing pairs") or not.
    void showGenerating(bool generating);
    void onPairsGenerated(const PairSupplyResult& result);
    /// Shows what auto-labelling did (the queue is read again when it stored labels).
    void autoLabelled(const AutoLabelResult& result);
    /// A team store's undo of an auto-labelled batch, on a connection of its own.
    void undoBatchInBackground(const std::vector<int64_t>& labelIds);
    void reportError(const QString& message);
    /// A press that stored nothing, said beside the pair where the labeler looks (the status bar
    /// may be off-screen or unread): `why`, else that the pair on screen was not painted yet.
    void showIgnored(const QString& why = {});

    // A team store (labelviewteam.cpp): choices go to an outbox on this machine's disk and a
    // worker thread talks to the server.
    void startTeamChannel();
    /// Claims more pairs when few are queued (and the last claim was not dry).
    void askForPairs();
    void onTeamClaim(const TeamClaim& claim);
    void onTeamCounts(const TeamCounts& counts);
    void onTeamModels(const TeamModels& models);
    /// The last counts the server gave, with this session's count and the choices kept here now.
    void showTeamCounts();
    QString teamEmptyText() const;

    PreferenceStore& m_store;
    TaskCatalog m_tasks;
    LabelSession m_session;
    int m_ignoredPresses = 0;
    QTimer* m_ignoredTimer = nullptr; ///< hides the ignored-press notice
    bool m_awaitingPaint = false; ///< the pair on screen was not painted yet
    std::function<bool(int)> m_confirmAutoLabel;
    KeyBindings m_keys = KeyBindings::load();
    bool m_newPairsFirst = false;
    QString m_generatedFrom; ///< the store's name of the model the pieces in flight come from
    bool m_generatedAhead = false; ///< a piece of the request in flight was placed Next
    bool m_generating = false;     ///< between the supply's started() and its finished() (busy() turns
                                   ///< false before finished() arrives)
    bool m_stopping = false;       ///< Stop was pressed; finished() has not arrived yet
    bool m_drawStopped = false;    ///< the expert stopped a draw: no refill until they ask for pairs
    int m_generationTotal = 0;     ///< the request in flight: pairs asked for, and handed over so far
    int m_generationReady = 0;
    QElapsedTimer m_shownAt;

    PairPanel* m_pair = nullptr;
    QLabel* m_emptyMessage = nullptr;
    QLabel* m_provenance = nullptr;
    QLabel* m_ignored = nullptr;
    QPushButton* m_tieButton = nullptr;
    QPushButton* m_bothBadButton = nullptr;
    QPushButton* m_skipButton = nullptr;
    QPushButton* m_undoButton = nullptr;
    QCheckBox* m_hints = nullptr;
    NewPairsPicker* m_newPairs = nullptr;
    LabelStatsBar* m_stats = nullptr;
    ModelPicker* m_models = nullptr;
    QPushButton* m_generate = nullptr;
    QProgressBar* m_busy = nullptr;
    PairSupply* m_supply = nullptr;
    TeamLabelChannel* m_team = nullptr;
    AutoLabelJob* m_autoLabel = nullptr; ///< a team store's auto-labelling, made on first use
    bool m_undoingBatch = false;         ///< a team store's undo of an auto-labelled batch is on its way
    std::shared_ptr<LabelOutbox> m_outbox;
    std::map<std::string, ModelRecord> m_teamModels; ///< to name where a pair comes from
    QString m_wantedModel; ///< a model to choose once a team store's model list holds it
    qint64 m_teamOthers = 0;  ///< pending pairs of other tasks, at the last count
    std::unique_ptr<TeamCounts> m_teamCounts; ///< the last counts the server gave
    bool m_claimDry = false;  ///< the last claim brought nothing new: wait before asking again
};

} // namespace d2dpo::ui
