// SPDX-License-Identifier: GPL-3.0-or-later
// What the Train view says about the data a run has and what the run did: before a run, how many
// decisive pairs there are against what the task's length and the measured label studies suggest
// (docs/experts.md); after it, plainly, when the rule's share or the valid share
// went down against the reference.
#pragma once

#include <QLabel>

#include <optional>

#include "base/samplemetrics.h"
#include "base/trainlistener.h"

namespace d2dpo::ui {

/// The decisive pairs a task of sequences of `length` wants, as a rule of thumb from the label
/// studies (3 for 10-bit integers, about 20 for 8-letter words, more as sequences grow): 2 per
/// position, at least 20.
qint64 suggestedDecisivePairs(int length);
/// Before a run: "" when the run trains on rule-made pairs (as many as asked for), has none (the
/// data panel says so) or has enough.
QString dataSizeAdvice(qint64 decisivePairs, int length, bool rulePairs);
/// After a run: what went down from the reference to the last evaluation, or "".
QString outcomeWarning(const SampleMetrics& reference, const SampleMetrics& last);

class RunAdvice final : public QLabel {
    Q_OBJECT

public:
    explicit RunAdvice(QWidget* parent = nullptr);

    /// Before a run (the data, the reference or the settings changed): too few decisive pairs, and a
    /// batch larger than the pairs at hand (0: the settings are not valid yet).
    void beforeRun(qint64 decisivePairs, int length, bool rulePairs, int batch = 0);
    /// A run starts: its evaluations are heard from now on.
    void runStarted();
    void onEvaluation(const EvaluationEvent& event);
    /// The run ended: the warning, when the last evaluation is worse than the reference's.
    void runEnded();

private:
    void say(const QString& text);

    std::optional<SampleMetrics> m_reference;
    std::optional<SampleMetrics> m_last;
};

} // namespace d2dpo::ui
