// SPDX-License-Identifier: GPL-3.0-or-later
// A table cell the user can select and copy but not edit: the figures and sequences the
// Measurements view's pairs preview and the Models view's held-out tab list.
#pragma once

#include <QTableWidgetItem>

namespace d2dpo::ui {

inline QTableWidgetItem* readOnlyCell(const QString& text)
{
    auto* item = new QTableWidgetItem(text);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    return item;
}

} // namespace d2dpo::ui
