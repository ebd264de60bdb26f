// SPDX-License-Identifier: GPL-3.0-or-later
// How the Labelers panel and the comparison results write a report's figures: three decimals,
// "undefined" for NaN, intervals in brackets, as `d2dpo prefs agreement` and `d2dpo compare`
// print them (so a figure on screen can be found in the command's output).
#pragma once

#include <QString>
#include <QStringList>

#include "experts/agreementmath.h"

class QTableWidget;
class QWidget;

namespace d2dpo::ui {

/// "0.412", or "undefined" when `value` is NaN.
QString figure(double value);
/// "[0.301, 0.522]", or "[no interval]" when the bootstrap had too few defined resamples.
QString interval(const Interval& i);
/// A read-only table with these column titles (tooltips beside them), rows by the caller.
QTableWidget* makeReportTable(const QStringList& titles, const QStringList& tooltips, QWidget* parent);
/// Sets a cell's text and tooltip (the reason beside an "undefined").
void setCell(QTableWidget* table, int row, int column, const QString& text, const QString& tooltip = {});

} // namespace d2dpo::ui
