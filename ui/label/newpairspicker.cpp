// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/label/newpairspicker.h"

#include <QWheelEvent>

#include <algorithm>

namespace d2dpo::ui {

NewPairsPicker::NewPairsPicker(int candidates, QWidget* parent) : QComboBox(parent)
{
    setObjectName(QStringLiteral("newPairsOrder"));
    setFocusPolicy(Qt::NoFocus);
    addItem(tr("As drawn"));
    addItem(tr("Least sure first"), int(PairPick::LeastSure));
    addItem(tr("Surest first"), int(PairPick::Surest));
    setAccessibleName(tr("Which new pairs to keep"));
    setToolTip(tr("Least sure / surest first: draw %1 times as many pairs and keep those whose implicit reward "
                  "margin (the model against the one it was fine-tuned from) is nearest to / farthest from 0. "
                  "Surest pairs are decided more often than tied (README: What the experts think). A pretrained "
                  "model is sure of nothing: its pairs stay as drawn.")
                   .arg(candidates));
}

std::optional<PairPick> NewPairsPicker::pick() const
{
    const QVariant data = currentData();
    return data.isValid() ? std::optional(PairPick(data.toInt())) : std::nullopt;
}

void NewPairsPicker::setPick(std::optional<PairPick> pick)
{
    setCurrentIndex(pick ? std::max(0, findData(int(*pick))) : 0);
}

void NewPairsPicker::wheelEvent(QWheelEvent* event)
{
    // A wheel passing over the box scrolls the page: only a focused (clicked) box changes.
    if (!hasFocus())
        event->ignore();
    else
        QComboBox::wheelEvent(event);
}

} // namespace d2dpo::ui
