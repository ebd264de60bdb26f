// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/models/newmodel/newmodelverdict.h"

#include <QAbstractButton>
#include <QDialogButtonBox>
#include <QPushButton>

#include "base/modelverdict.h"

namespace d2dpo::ui {

NewModelVerdict newModelVerdict(const SampleMetrics& metrics, const QString& made, const QString& hint)
{
    NewModelVerdict verdict;
    verdict.figures = QString::fromStdString(newModelFigures(metrics));
    const QString advice = QString::fromStdString(weakModelAdvice(metrics));
    verdict.tooWeak = !advice.isEmpty();
    const QString head = QStringLiteral("%1, %2").arg(made, verdict.figures).toHtmlEscaped();
    verdict.summaryHtml =
        verdict.tooWeak
            ? QStringLiteral("<b>%1</b>: <span style='color:#b03a2e'>%2</span>")
                  .arg(head, (hint.isEmpty() ? advice : advice + QLatin1Char(' ') + hint).toHtmlEscaped())
            : QStringLiteral("%1: %2").arg(made, verdict.figures).toHtmlEscaped();
    return verdict;
}

void keepOpenOnAdvice(QDialogButtonBox* buttons)
{
    for (QAbstractButton* b : buttons->buttons())
        if (buttons->buttonRole(b) == QDialogButtonBox::AcceptRole)
            b->setEnabled(false);
    buttons->button(QDialogButtonBox::Cancel)->setText(QDialogButtonBox::tr("Close"));
}

void resetButtons(QDialogButtonBox* buttons)
{
    buttons->button(QDialogButtonBox::Cancel)->setText(QDialogButtonBox::tr("Cancel"));
}

} // namespace d2dpo::ui
