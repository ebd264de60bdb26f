// SPDX-License-Identifier: GPL-3.0-or-later
// The Models view's lineage tree: each model under the one it was fine-tuned from, with its kind,
// its figures (one measurement per model, its provenance in the tooltip) and when it was made.
#pragma once

#include <QString>

#include <optional>
#include <vector>

#include "base/samplemetrics.h"
#include "store/preferencestore.h"

class QTreeWidget;
class QTreeWidgetItem;

namespace d2dpo::ui {

enum ModelColumn { kName, kKind, kRule, kVsr, kCreated };

/// Sets the tree's columns: the name takes the room left (wrapped at its spaces), the rest are
/// always whole.
void setUpModelTree(QTreeWidget* tree);
/// Fills the tree (parents before children; a model whose parent is not in the store is a root);
/// each item holds its model's id (Qt::UserRole of kName). Returns the newest model's id.
QString fillModelTree(QTreeWidget* tree, const std::vector<ModelRecord>& models);
/// An item's figure cells: `metrics`'s rule share and VSR, with where they come from.
void showModelFigures(QTreeWidgetItem* item, const std::optional<SampleMetrics>& metrics, const QString& source);

} // namespace d2dpo::ui
