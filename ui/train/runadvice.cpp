// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/train/runadvice.h"

#include <QStringList>

#include <algorithm>

#include "base/batchadvice.h"
#include "base/metricnames.h"

namespace d2dpo::ui {

qint64 suggestedDecisivePairs(int length) { return std::max<qint64>(20, 2 * qint64(length)); }

QString dataSizeAdvice(qint64 decisivePairs, int length, bool rulePairs)
{
    if (rulePairs || length <= 0 || decisivePairs == 0)
        return {}; // none at all: the data panel says so, and a run cannot start
    const qint64 suggested = suggestedDecisivePairs(length);
    if (decisivePairs >= suggested)
        return {};
    // Short: it shares the Train view's notice strip (the label studies behind it: docs/experts.md).
    return RunAdvice::tr("%1 decisive pairs for sequences of length %2: fewer than about %3 (two a position, at least "
                         "20) may not be enough. Label more first, or run and compare.")
        .arg(decisivePairs)
        .arg(length)
        .arg(suggested);
}

QString outcomeWarning(const SampleMetrics& reference, const SampleMetrics& last)
{
    QStringList worse;
    const auto compare = [&](const std::string& name, const QString& what) {
        const auto before = reference.value(name), after = last.value(name);
        if (before && after && *after < *before - 0.005) // beyond the last digit shown
            worse << RunAdvice::tr("%1 went down from %2 to %3").arg(what).arg(*before, 0, 'f', 3).arg(*after, 0, 'f', 3);
    };
    if (!reference.ruleMetric.empty())
        compare(reference.ruleMetric, RunAdvice::tr("the rule's share (%1)").arg(QString::fromStdString(reference.ruleMetric)));
    compare(metric::kVsr, RunAdvice::tr("the valid share (vsr)"));
    if (worse.isEmpty())
        return {};
    return RunAdvice::tr("This run made the model worse than its reference: %1. More decisive labels, a larger beta or "
                         "fewer steps may help; the reference stays as it was.")
        .arg(worse.join(RunAdvice::tr("; ")));
}

RunAdvice::RunAdvice(QWidget* parent) : QLabel(parent)
{
    setObjectName(QStringLiteral("runAdvice"));
    setWordWrap(true);
    setVisible(false);
}

void RunAdvice::say(const QString& text)
{
    setText(text);
    setToolTip(text); // whole, should the Train view's notice strip cut it
    setStyleSheet(QStringLiteral("QLabel { background: #fff4d6; color: #5c4300; padding: 4px; }"));
    setVisible(!text.isEmpty());
}

void RunAdvice::beforeRun(qint64 decisivePairs, int length, bool rulePairs, int batch)
{
    QStringList advice;
    if (const QString few = dataSizeAdvice(decisivePairs, length, rulePairs); !few.isEmpty())
        advice << few;
    if (const std::string warning = batchLargerThanPairsWarning(batch, decisivePairs); !rulePairs && !warning.empty()) {
        QString said = QString::fromStdString(warning);
        said[0] = said[0].toUpper();
        advice << said + QLatin1Char('.');
    }
    say(advice.join(QLatin1Char(' ')));
}

void RunAdvice::runStarted()
{
    m_reference.reset();
    m_last.reset();
    say({});
}

void RunAdvice::onEvaluation(const EvaluationEvent& event)
{
    (event.ofReference ? m_reference : m_last) = event.metrics;
}

void RunAdvice::runEnded()
{
    if (m_reference && m_last)
        say(outcomeWarning(*m_reference, *m_last));
}

} // namespace d2dpo::ui
