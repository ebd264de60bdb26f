// SPDX-License-Identifier: GPL-3.0-or-later
// The Label view's small parts, made as it wants them: buttons that never take the focus (keys
// always reach the view), the hints box, the busy bar of pair generation, the provenance line and
// the "key ignored" flash.
#pragma once

#include <QString>
#include <QStringList>

#include <string>

#include "store/preferencestore.h"

class QCheckBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QWidget;

namespace d2dpo::ui {

QPushButton* makeLabelButton(const QString& text, QWidget* parent);
QCheckBox* makeHintsBox(QWidget* parent);
/// Hidden until pairs are being generated; shows "40 / 100 sequences · 0:12 left" as they come.
QProgressBar* makeGenerationBar(QWidget* parent);
/// Sets the bar to `done` of `total` sequences drawn, with the time left when known (< 0: not yet).
void showGenerationProgress(QProgressBar* bar, long long done, long long total, double secondsLeft);
/// The bar while a margin request's candidate pairs are scored: their count and time left.
void showScoringProgress(QProgressBar* bar, long long done, long long total, double secondsLeft);
/// The Generate button's texts: idle (a request draws `pairsPerRequest`), drawing, stopping.
QString generateButtonText(int pairsPerRequest);
QString stopDrawingButtonText();
QString stoppingButtonText();
/// Fixes `button`'s width to that of the longest of the texts it shows, so that it never moves
/// what stands beside it when its text changes.
void fixWidthToLongestText(QPushButton* button, const QStringList& texts);
QLabel* makeProvenanceLabel(QWidget* parent);
/// What a press the view ignored says by default: the pair on screen was not painted yet.
QString ignoredPressText();
QLabel* makeIgnoredPressLabel(QWidget* parent);
/// What the Label view says with no pair to show: generating, nothing left, or nothing left of the
/// chosen model's `task` while pairs of other tasks wait for `labeler` (and how to reach them).
QString emptyQueueText(PreferenceStore& store, const std::string& task, const std::string& labeler, bool generating);
/// The same with the count of `others` (pending pairs of other tasks) known already.
QString emptyQueueText(qint64 others, bool generating);

} // namespace d2dpo::ui
