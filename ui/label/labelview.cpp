// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/label/labelview.h"

#include <algorithm>
#include <utility>

#include <QCheckBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>

#include "ui/label/labelstatsbar.h"
#include "ui/label/labelviewparts.h"
#include "ui/label/modelpicker.h"
#include "ui/label/newpairspicker.h"
#include "ui/label/pairpanel.h"
#include "ui/label/pairsupply.h"
#include "ui/team/teamlabelchannel.h"

namespace d2dpo::ui {

namespace {

constexpr size_t kRefillBelow = 10; // ask for more pairs in the background when fewer are queued

} // namespace

LabelView::LabelView(PreferenceStore& store, QWidget* parent)
    : QWidget(parent)
    , m_store(store)
    , m_tasks(store)
    , m_session(store, "expert")
    , m_supply(new PairSupply(this))
{
    setFocusPolicy(Qt::StrongFocus);

    // Top bar: the model pairs come from, generation, hints.
    m_models = new ModelPicker(this);
    m_generate = makeLabelButton(generateButtonText(kPairsPerRequest), this);
    m_generate->setObjectName(QStringLiteral("generateButton"));
    m_busy = makeGenerationBar(this);
    m_hints = makeHintsBox(this);
    m_newPairs = new NewPairsPicker(kMarginCandidates, this);
    auto* top = new QHBoxLayout;
    auto* modelLabel = new QLabel(tr("Model:"), this);
    modelLabel->setToolTip(tr("New pairs come from this model; the pairs shown are its task's"));
    top->addWidget(modelLabel);
    // Nothing in this row moves as drawing starts and ends: the box keeps its width and the button
    // the width of its longest text, and the bar takes its room from the stretch to its right (a
    // click meant for the button had opened the model list once the bar went away and the box,
    // stretching, widened).
    top->addWidget(m_models);
    top->addWidget(m_generate);
    fixWidthToLongestText(m_generate, {m_generate->text(), stopDrawingButtonText(), stoppingButtonText()});
    auto* newPairsLabel = new QLabel(tr("New pairs:"), this);
    top->addWidget(newPairsLabel);
    top->addWidget(m_newPairs);
    // A team's labeler labels the pairs it is handed: models and new pairs are the maintainers'.
    for (QWidget* maintainers : {static_cast<QWidget*>(modelLabel), static_cast<QWidget*>(m_models),
                                 static_cast<QWidget*>(m_generate), static_cast<QWidget*>(newPairsLabel),
                                 static_cast<QWidget*>(m_newPairs)})
        maintainers->setVisible(store.canMaintain());
    top->addWidget(m_busy);
    top->addStretch();
    top->addWidget(m_hints);

    // Where the pair comes from, the pair (or why there is none), and a press that was ignored.
    m_provenance = makeProvenanceLabel(this);
    m_pair = new PairPanel(this);
    m_pair->installEventFilter(this);
    m_ignored = makeIgnoredPressLabel(this);
    m_ignoredTimer = new QTimer(this);
    m_ignoredTimer->setSingleShot(true);
    connect(m_ignoredTimer, &QTimer::timeout, m_ignored, &QWidget::hide);
    m_emptyMessage = new QLabel(this);
    m_emptyMessage->setAlignment(Qt::AlignCenter);
    m_emptyMessage->setWordWrap(true);
    m_emptyMessage->hide();

    m_tieButton = makeLabelButton(tr("Tie   [T]"), this);
    m_bothBadButton = makeLabelButton(tr("Both bad   [B]"), this);
    m_bothBadButton->setObjectName(QStringLiteral("bothBadButton"));
    m_skipButton = makeLabelButton(tr("Skip   [S · Space]"), this);
    m_undoButton = makeLabelButton(tr("Undo   [Ctrl+Z]"), this);
    auto* actions = new QHBoxLayout;
    actions->addStretch();
    actions->addWidget(m_tieButton);
    actions->addWidget(m_bothBadButton);
    actions->addWidget(m_skipButton);
    actions->addWidget(m_undoButton);
    actions->addStretch();

    m_stats = new LabelStatsBar(m_store, m_tasks, this);
    if (store.isTeamStore())
        startTeamChannel();

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addSpacing(6);
    layout->addWidget(m_provenance);
    layout->addWidget(m_pair);
    layout->addWidget(m_ignored);
    layout->addWidget(m_emptyMessage, 1);
    layout->addLayout(actions);
    layout->addStretch(1);
    layout->addWidget(m_stats);

    connect(m_pair, &PairPanel::leftChosen, this, &LabelView::chooseLeft);
    connect(m_pair, &PairPanel::rightChosen, this, &LabelView::chooseRight);
    connect(m_tieButton, &QPushButton::clicked, this, &LabelView::chooseTie);
    connect(m_bothBadButton, &QPushButton::clicked, this, &LabelView::chooseBothBad);
    connect(m_skipButton, &QPushButton::clicked, this, &LabelView::skip);
    connect(m_undoButton, &QPushButton::clicked, this, &LabelView::undo);
    connect(m_generate, &QPushButton::clicked, this, &LabelView::generateOrStop);
    connect(m_models, &QComboBox::activated, this, [this] { // the user's choice only
        m_wantedModel.clear();
        followPickedTask();
    });
    connect(m_stats, &LabelStatsBar::autoLabelClicked, this, &LabelView::autoLabelWithRule);
    connect(m_stats, &LabelStatsBar::labelersClicked, this, &LabelView::labelersWanted);
    connect(m_stats, &LabelStatsBar::failed, this, &LabelView::reportError);
    connect(m_hints, &QCheckBox::toggled, this, &LabelView::setHintsVisible);
    connect(m_supply, &PairSupply::progress, m_busy,
            [this](qint64 done, qint64 total, double left) { showGenerationProgress(m_busy, done, total, left); });
    connect(m_supply, &PairSupply::scoring, m_busy,
            [this](qint64 done, qint64 total, double left) { showScoringProgress(m_busy, done, total, left); });
    connect(m_supply, &PairSupply::started, this, [this](int count) {
        m_busy->setRange(0, 0); // busy from the first moment: loading a model takes a while too
        m_busy->show();
        showGenerating(true);
        m_generationTotal = count;
        m_generationReady = 0;
        Q_EMIT statusMessage(tr("Generating %1 pairs in the background…").arg(count));
    });
    connect(m_supply, &PairSupply::pairsReady, this, [this](const PairSupplyResult& piece) {
        // A "label this model's outputs" request's first piece comes next, its later pieces
        // behind it and before the rest of the queue.
        using Place = LabelSession::QueuePlace;
        const Place place = !m_newPairsFirst ? Place::Last : m_generatedAhead ? Place::AfterNext : Place::Next;
        if (auto name = storeGenerated(piece, place)) {
            m_generatedFrom = *name;
            m_generatedAhead = m_newPairsFirst;
        }
        // The pairs come in pieces: the line counts them as they arrive.
        m_generationReady += int(piece.pairs.size());
        if (m_generationReady < m_generationTotal)
            Q_EMIT statusMessage(tr("%1 of %2 pairs ready; drawing the rest in the background…")
                                     .arg(m_generationReady)
                                     .arg(m_generationTotal));
    });
    connect(m_supply, &PairSupply::finished, this, &LabelView::onPairsGenerated);

    setKeyBindings(m_keys);
    reload();
}

void LabelView::setKeyBindings(const KeyBindings& keys)
{
    m_keys = keys;
    m_pair->setButtonKeys(keys.shown(LabelAction::Left), keys.shown(LabelAction::Right));
    m_tieButton->setText(tr("Tie   [%1]").arg(keys.shown(LabelAction::Tie)));
    m_bothBadButton->setText(tr("Both bad   [%1]").arg(keys.shown(LabelAction::BothBad)));
    m_skipButton->setText(tr("Skip   [%1]").arg(keys.shown(LabelAction::Skip)));
    m_undoButton->setText(tr("Undo   [%1]").arg(keys.shown(LabelAction::Undo)));
}

LabelView::~LabelView()
{
    // At the model's next pass, and a team server's answer not awaited: a closing window never
    // waits for a whole draw, nor for a server that hangs.
    m_supply->abandon();
    m_supply->waitForIdle();
    delete m_team; // its last send and the leases given back, before the session goes
}

QString LabelView::provenance() const
{
    const std::optional<ShownPair>& pair = m_session.current();
    if (!pair)
        return {};
    if (!m_team)
        return pairOrigin(m_store, *pair);
    if (!m_store.canMaintain() && !pair->blind) // a team's labeler sees sequences, not who made them
        return tr("Pair #%1").arg(pair->id);
    return pairOrigin([this](const std::string& id) -> std::optional<ModelRecord> {
        const auto known = m_teamModels.find(id);
        return known == m_teamModels.end() ? std::nullopt : std::optional(known->second);
    }, *pair);
}

void LabelView::setLabeler(const QString& name)
{
    // Another labeler starts a new session: what the last one labelled cannot be undone from here.
    m_session.setLabeler((name.trimmed().isEmpty() ? QStringLiteral("expert") : name.trimmed()).toStdString());
    updateStatistics();
}

void LabelView::setHintsVisible(bool visible)
{
    if (m_hints->isChecked() != visible)
        m_hints->setChecked(visible);
    m_pair->setHintsVisible(visible);
}

bool LabelView::hintsVisible() const { return m_hints->isChecked(); }

void LabelView::setNewPairPick(std::optional<PairPick> pick) { m_newPairs->setPick(pick); }
std::optional<PairPick> LabelView::newPairPick() const { return m_newPairs->pick(); }

void LabelView::reload()
{
    m_tasks.forgetFailures(); // a model added since may have brought the task
    // A team's labeler has no model to pick (and may read none); a maintainer's list comes from
    // the team store's worker (onTeamModels).
    if (m_team && m_store.canMaintain())
        m_team->readModels();
    else if (const QString error = m_store.canMaintain() ? m_models->reload(m_store, m_tasks) : QString();
             !error.isEmpty())
        reportError(error);
    m_claimDry = false; // asked to look again
    if (!m_stopping)
        m_generate->setEnabled(m_generating || m_models->count() > 0);
    followPickedTask();
    if (!m_session.current()) {
        m_session.dropQueue();
        showNext();
    }
    updateStatistics();
}

void LabelView::requeueForModel(const QString& modelId)
{
    // A comparison's pairs are of its models' task: show that task's queue, where they lead.
    m_wantedModel.clear(); // this choice is the latest
    if (m_team) { // the models the worker read last: the window's thread never asks the server
        if (const auto known = m_teamModels.find(modelId.toStdString()); known != m_teamModels.end())
            m_models->select(QString::fromStdString(known->second.path));
    } else if (auto model = m_store.model(modelId.toStdString()); model && model.value()) {
        m_models->select(QString::fromStdString(model.value()->path));
    }
    followPickedTask();
    requeue();
}

void LabelView::useModelAt(const QString& checkpointPath)
{
    m_wantedModel = checkpointPath; // chosen when the list on its way holds it (onTeamModels)
    m_team->readModels();
}

void LabelView::followPickedTask()
{
    // The queue holds the chosen model's task's pairs: globin pairs when a globin model is chosen.
    const std::string task = m_models->taskKey().toStdString();
    if (task == m_session.task())
        return;
    m_session.setTask(task);
    m_claimDry = false; // another task's queue: claimed anew
    if (!m_session.current())
        showNext();
    updateStatistics();
}

void LabelView::showNext()
{
    if (Status s = m_session.advance(); !s)
        reportError(QString::fromStdString(s.error()));
    showCurrent();
}

void LabelView::showCurrent()
{
    const std::optional<ShownPair>& current = m_session.current();
    const bool have = current.has_value();
    m_pair->showPair(current, current ? m_tasks.find(current->task) : nullptr);
    m_models->setMasked(have && current->blind);
    for (QPushButton* b : {m_tieButton, m_bothBadButton, m_skipButton})
        b->setEnabled(have);
    m_emptyMessage->setVisible(!have);
    if (!have)
        m_emptyMessage->setText(m_team ? teamEmptyText()
                                       : emptyQueueText(m_store, m_session.task(), m_session.labeler(), m_supply->busy()));
    m_shownAt.restart();
    // Presses count once the pair has been painted; a hidden view has nothing to wait for.
    m_awaitingPaint = have && isVisible();
    m_pair->update();
    m_provenance->setText(provenance());
    if (m_team)
        askForPairs();
    // Keep a stock of pairs so the next one always appears at once: on a team store, claimed from
    // the pairs the maintainers made (generating there is their explicit act).
    if (!m_team && m_session.queued() < kRefillBelow && !m_generating && !m_drawStopped && m_models->count() > 0)
        generateMore();
}

void LabelView::updateStatistics()
{
    if (m_team) { // this session's count at once; the server's when the worker has read them
        showTeamCounts();
        m_team->readCounts(m_session.task(), !m_session.current());
    }
    else {
        m_stats->refresh(labeler(), m_session.labelledCount());
    }
}

void LabelView::reportError(const QString& message) { Q_EMIT statusMessage(tr("Error: %1").arg(message)); }

void LabelView::showIgnored(const QString& why)
{
    ++m_ignoredPresses;
    m_ignored->setText(why.isEmpty() ? ignoredPressText() : why);
    m_ignored->show();
    m_ignoredTimer->start(why.isEmpty() ? 900 : 2500); // long enough to read; a later press starts it again
}

void LabelView::resizeEvent(QResizeEvent* event)
{
    // The cells grow with the window (44 px at 1024x640, about 100 px on a 4K screen).
    m_pair->setMaxCell(std::clamp(height() / 12.0, 44.0, 110.0));
    QWidget::resizeEvent(event);
}

bool LabelView::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_pair && event->type() == QEvent::Paint)
        m_awaitingPaint = false; // from now on a press is about the pair on screen
    return QWidget::eventFilter(watched, event);
}

void LabelView::keyPressEvent(QKeyEvent* event)
{
    if (event->isAutoRepeat()) { // holding a key must not label a run of pairs
        event->accept();
        return;
    }
    switch (m_keys.actionFor(*event)) {
    case LabelAction::Left: chooseLeft(); return;
    case LabelAction::Right: chooseRight(); return;
    case LabelAction::Tie: chooseTie(); return;
    case LabelAction::BothBad: chooseBothBad(); return;
    case LabelAction::Skip: skip(); return;
    case LabelAction::Undo: undo(); return;
    case LabelAction::NextPage: m_pair->scrollPages(1); return;
    case LabelAction::PreviousPage: m_pair->scrollPages(-1); return;
    case LabelAction::None: break;
    }
    QWidget::keyPressEvent(event);
}

} // namespace d2dpo::ui
