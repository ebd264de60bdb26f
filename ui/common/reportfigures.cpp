// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/common/reportfigures.h"

#include <cmath>

#include <QCoreApplication>
#include <QHeaderView>
#include <QTableWidget>

namespace d2dpo::ui {

namespace {
QString tr(const char* text) { return QCoreApplication::translate("ReportFigures", text); }
} // namespace

QString figure(double value)
{
    return std::isnan(value) ? tr("undefined") : QString::number(value, 'f', 3);
}

QString interval(const Interval& i)
{
    return std::isnan(i.low) || std::isnan(i.high) ? tr("[no interval]")
                                                   : QStringLiteral("[%1, %2]").arg(figure(i.low), figure(i.high));
}

QTableWidget* makeReportTable(const QStringList& titles, const QStringList& tooltips, QWidget* parent)
{
    auto* table = new QTableWidget(0, int(titles.size()), parent);
    table->setHorizontalHeaderLabels(titles);
    for (int c = 0; c < tooltips.size() && c < titles.size(); ++c)
        table->horizontalHeaderItem(c)->setToolTip(tooltips[c]);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setSelectionMode(QAbstractItemView::NoSelection);
    table->setFocusPolicy(Qt::NoFocus);
    table->verticalHeader()->hide();
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table->horizontalHeader()->setStretchLastSection(true);
    table->setAlternatingRowColors(true);
    return table;
}

void setCell(QTableWidget* table, int row, int column, const QString& text, const QString& tooltip)
{
    auto* item = new QTableWidgetItem(text);
    item->setToolTip(tooltip);
    table->setItem(row, column, item);
}

} // namespace d2dpo::ui
