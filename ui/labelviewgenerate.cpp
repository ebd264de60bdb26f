// SPDX-License-Identifier: GPL-3.0-or-later
// LabelView's new pairs: generated from the chosen model in the background (PairSupply), stored,
// and queued (first, for the iterative loop's "label this model's outputs").
#include "ui/labelview.h"

#include <utility>

#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QRandomGenerator>

#include "ui/labelviewparts.h"
#include "ui/modelpicker.h"
#include "ui/newpairspicker.h"
#include "ui/pairsupply.h"

namespace d2dpo::ui {

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
        auto reference = referencePathOf(m_store, checkpointPath.toStdString());
        if (!reference)
            return reportError(QString::fromStdString(reference.error()));
        byMargin = MarginRequest{*pick, QString::fromStdString(reference.value()), kMarginCandidates};
    }
    if (!m_supply->request(checkpointPath, count, QRandomGenerator::global()->generate64(), byMargin))
        Q_EMIT statusMessage(tr("Already generating pairs…"));
    if (!m_session.current())
        m_emptyMessage->setText(m_team ? teamEmptyText()
                                       : emptyQueueText(m_store, m_session.task(), m_session.labeler(), true));
}

void LabelView::labelFrom(const QString& checkpointPath, int count)
{
    reload();
    m_models->select(checkpointPath);
    followPickedTask();
    m_newPairsFirst = true;
    generateFrom(checkpointPath, count);
}

void LabelView::onPairsGenerated(const PairSupplyResult& result)
{
    m_busy->hide();
    m_generate->setEnabled(m_models->count() > 0);
    if (!result.error.isEmpty()) {
        m_newPairsFirst = false;
        reportError(result.error);
        showCurrent(); // refresh the empty-state message; the pair on screen stays
        return;
    }
    // A model the store already knows (a fine-tuned one) keeps its name, lineage and run; with
    // m_newPairsFirst the new model's pairs come next, the pair on screen waiting behind them.
    const std::optional<int64_t> shown = m_session.current() ? std::optional(m_session.current()->id) : std::nullopt;
    auto stored = m_session.addGenerated(result.model, result.pairs, std::exchange(m_newPairsFirst, false),
                                         {result.margins, result.scoredBy});
    if (!stored) {
        reportError(QString::fromStdString(stored.error()));
        return;
    }
    // Beside a blind pair, a model's name would read as the pair's origin: the message names none.
    const QString modelName = m_models->masked() ? tr("a model") : QString::fromStdString(stored->modelName);
    if (const auto& now = m_session.current(); !now || std::optional(now->id) != shown)
        showCurrent(); // a pair already on screen keeps its time and its paint
    reload();
    const QString added = tr("Added %1 pairs from %2 in %3 s")
                              .arg(result.pairs.size())
                              .arg(modelName)
                              .arg(result.milliseconds / 1000.0, 0, 'f', 1);
    Q_EMIT statusMessage(result.sampling.isEmpty() ? added : added + tr(" · %1").arg(result.sampling));
}

} // namespace d2dpo::ui
