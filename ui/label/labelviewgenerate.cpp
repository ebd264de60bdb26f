// SPDX-License-Identifier: GPL-3.0-or-later
// LabelView's new pairs: generated from the chosen model in the background (PairSupply), stored,
// and queued (first, for the iterative loop's "label this model's outputs").
#include "ui/label/labelview.h"

#include <optional>
#include <utility>

#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QRandomGenerator>

#include "ui/label/labelviewparts.h"
#include "ui/label/modelpicker.h"
#include "ui/label/newpairspicker.h"
#include "ui/label/pairsupply.h"

namespace d2dpo::ui {

void LabelView::generateOrStop()
{
    if (!m_generating) {
        m_drawStopped = false; // asked for pairs again: the stock is kept again
        generateMore();
        return;
    }
    if (m_stopping)
        return;
    m_supply->cancel();
    m_stopping = true;
    m_drawStopped = true; // labelling on does not start the next draw
    m_generate->setEnabled(false);
    m_generate->setText(stoppingButtonText());
    Q_EMIT statusMessage(tr("Stopping at the model's next pass; the pairs drawn so far stay"));
}

void LabelView::generateMore()
{
    const QString path = m_models->checkpointPath();
    if (path.isEmpty()) {
        Q_EMIT statusMessage(tr("No model to generate pairs from"));
        return;
    }
    generateFrom(path, kPairsPerRequest);
}

void LabelView::generateFrom(const QString& checkpointPath, int count)
{
    std::optional<MarginRequest> byMargin;
    if (const std::optional<PairPick> pick = newPairPick()) {
        QString referencePath; // on a team store the supply reads it, off the window's thread
        if (!m_team) {
            auto reference = referencePathOf(m_store, checkpointPath.toStdString());
            if (!reference)
                return reportError(QString::fromStdString(reference.error()));
            referencePath = QString::fromStdString(reference.value());
        }
        byMargin = MarginRequest{*pick, referencePath, kMarginCandidates};
    }
    if (!m_supply->request(checkpointPath, count, QRandomGenerator::global()->generate64(), byMargin))
        Q_EMIT statusMessage(tr("Already generating pairs…"));
    if (!m_session.current())
        m_emptyMessage->setText(m_team ? teamEmptyText()
                                       : emptyQueueText(m_store, m_session.task(), m_session.labeler(), true));
}

void LabelView::labelFrom(const QString& checkpointPath, int count)
{
    m_drawStopped = false;
    reload();
    if (m_models->select(checkpointPath))
        m_wantedModel.clear();
    else if (m_team)
        m_wantedModel = checkpointPath; // a new model: chosen when the list on its way holds it
    followPickedTask();
    m_newPairsFirst = true;
    generateFrom(checkpointPath, count);
}

std::optional<QString> LabelView::storeGenerated(const PairSupplyResult& result, LabelSession::QueuePlace place)
{
    // A model the store already knows (a fine-tuned one) keeps its name, lineage and run.
    const int64_t shown = m_session.current() ? m_session.current()->id : -1; // ids start at 1
    QString modelName = result.storedModelName;
    if (result.stored) { // by the supply, on a team store: only queued here
        if (Status queued = m_session.queueGenerated(result.pairs, place); !queued)
            reportError(QString::fromStdString(queued.error()));
    } else {
        auto stored = m_session.addGenerated(result.model, result.pairs, place, {result.margins, result.scoredBy});
        if (!stored) {
            reportError(QString::fromStdString(stored.error()));
            return std::nullopt;
        }
        modelName = QString::fromStdString(stored->modelName);
    }
    if (const auto& now = m_session.current(); !now || now->id != shown)
        showCurrent(); // a pair already on screen keeps its time and its paint
    reload();
    // Beside a blind pair, a model's name would read as the pair's origin: the message names none.
    return m_models->masked() ? tr("a model") : modelName;
}

void LabelView::showGenerating(bool generating)
{
    m_generating = generating;
    m_stopping = false;
    m_generate->setText(generating ? stopDrawingButtonText() : generateButtonText(kPairsPerRequest));
    m_generate->setToolTip(generating ? tr("Stops at the model's next pass; the pairs drawn so far stay") : QString());
    m_generate->setEnabled(generating || m_models->count() > 0);
}

void LabelView::onPairsGenerated(const PairSupplyResult& result)
{
    m_busy->hide();
    showGenerating(false);
    const bool first = std::exchange(m_newPairsFirst, false) && !m_generatedAhead;
    m_generatedAhead = false;
    QString modelName = std::exchange(m_generatedFrom, {});
    int added = result.delivered;
    if (!result.pairs.empty()) { // a margin request: all at the end
        const auto name = storeGenerated(result, first ? LabelSession::QueuePlace::Next : LabelSession::QueuePlace::Last);
        if (!name)
            return;
        modelName = *name;
        added = int(result.pairs.size());
    }
    if (!result.error.isEmpty()) {
        reportError(added > 0 ? tr("%1 (%2 pairs were added before it)").arg(result.error).arg(added) : result.error);
        showCurrent(); // refresh the empty-state message; the pair on screen stays
        return;
    }
    const QString summary =
        (result.stopped ? tr("Stopped: added %1 pairs from %2 in %3 s") : tr("Added %1 pairs from %2 in %3 s"))
            .arg(added)
            .arg(modelName.isEmpty() ? tr("the model") : modelName)
            .arg(result.milliseconds / 1000.0, 0, 'f', 1);
    Q_EMIT statusMessage(result.sampling.isEmpty() ? summary : summary + tr(" · %1").arg(result.sampling));
}

} // namespace d2dpo::ui
