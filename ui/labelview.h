// SPDX-License-Identifier: GPL-3.0-or-later
// The Label view: two sequences side by side (PairPanel); the expert picks the better one from the
// keyboard (Left/Right, 1/2, A/L; T tie; S or Space skip; Ctrl+Z undo) and the next pair appears at
// once. Every label is committed to the store as it is made. Each pair is drawn in its task's
// alphabet; hints (what the task reads in a sequence, valid or not, the rule's view) can be hidden to avoid bias; the counters and statistics are below (LabelStatsBar); more pairs
// are generated from a chosen model in the background (PairSupply).
#pragma once

#include <QElapsedTimer>
#include <QWidget>

#include <deque>
#include <memory>
#include <optional>

#include "store/preferencestore.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;

namespace d2dpo::ui {

class LabelStatsBar;
class PairPanel;
class PairSupply;
struct PairSupplyResult;
class TaskCache;

class LabelView final : public QWidget {
    Q_OBJECT

public:
    explicit LabelView(PreferenceStore& store, QWidget* parent = nullptr);
    ~LabelView() override;

    void setLabeler(const QString& name);
    QString labeler() const { return m_labeler; }
    /// Choices made sooner than this after a pair appears are ignored (an accidental double
    /// press must not label a pair nobody has seen). 0 turns it off.
    void setMinimumDecisionMs(int ms) { m_minimumDecisionMs = ms; }
    void setHintsVisible(bool visible);
    bool hintsVisible() const;

    std::optional<ShownPair> currentPair() const { return m_current; }
    int sessionCount() const { return m_sessionCount; }
    PairSupply& supply() { return *m_supply; }

    /// Reloads the model list and the pending pairs from the store.
    void reload();
    /// When the store has no pending pairs, generate some from `checkpointPath` (first run).
    void generateFrom(const QString& checkpointPath, int count = 50);
    /// Generates pairs from `checkpointPath` and shows them next, ahead of older pending pairs
    /// (the iterative loop: label the fine-tuned model's own outputs).
    void labelFrom(const QString& checkpointPath, int count = 50);

public Q_SLOTS:
    void chooseLeft() { choose(Choice::Left); }
    void chooseRight() { choose(Choice::Right); }
    void chooseTie() { choose(Choice::Tie); }
    void skip() { choose(Choice::Skip); }
    void undo();
    void generateMore();
    void autoLabelWithRule();

Q_SIGNALS:
    void statusMessage(const QString& message);
    void labelled(qint64 pairId);

protected:
    void keyPressEvent(QKeyEvent* event) override;

private:
    void choose(Choice choice);
    void showNext();
    void fillQueue();
    void updateStatistics();
    void onPairsGenerated(const PairSupplyResult& result);
    void reportError(const QString& message);

    PreferenceStore& m_store;
    std::unique_ptr<TaskCache> m_tasks;
    QString m_labeler = QStringLiteral("expert");
    int m_minimumDecisionMs = 150;
    int m_sessionCount = 0;
    bool m_newPairsFirst = false;
    std::deque<ShownPair> m_queue;
    std::optional<ShownPair> m_current;
    QElapsedTimer m_shownAt;

    PairPanel* m_pair = nullptr;
    QLabel* m_emptyMessage = nullptr;
    QPushButton* m_tieButton = nullptr;
    QPushButton* m_skipButton = nullptr;
    QPushButton* m_undoButton = nullptr;
    QCheckBox* m_hints = nullptr;
    LabelStatsBar* m_stats = nullptr;
    QComboBox* m_models = nullptr;
    QPushButton* m_generate = nullptr;
    QProgressBar* m_busy = nullptr;
    PairSupply* m_supply = nullptr;
};

} // namespace d2dpo::ui
