// SPDX-License-Identifier: GPL-3.0-or-later
// The Models view's dialogs for one model: rename it, delete it from the store (refused while
// models descend from it; its file and its pairs' labels stay), and name its export's folder
// (the export's own dialog: exportdialog.h).
#pragma once

#include <QString>

#include "store/preferencestore.h"

class QWidget;

namespace d2dpo::ui {

/// Asks for a new name and stores it; false when cancelled or refused (with a message box).
bool renameModelWithDialog(QWidget* parent, PreferenceStore& store, const ModelRecord& model);
/// Says what goes and what stays, asks, and deletes; false when cancelled or refused.
bool deleteModelWithDialog(QWidget* parent, PreferenceStore& store, const ModelRecord& model);
/// A folder name for a model's export: its name in lower case with dashes ("d2dpo run 2 step 300"
/// -> "d2dpo-run-2-step-300"), "d2dpo-" in front unless it starts so already.
QString suggestedExportName(const ModelRecord& model);

} // namespace d2dpo::ui
