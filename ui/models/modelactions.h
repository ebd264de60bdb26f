// SPDX-License-Identifier: GPL-3.0-or-later
// The Models view's dialogs for one model: rename it, delete it from the store (refused while
// models descend from it; its file and its pairs' labels stay), and choose a new folder, named by
// the user, to export it into.
#pragma once

#include <QString>

#include "store/preferencestore.h"

class QWidget;

namespace d2dpo::ui {

/// Asks for a new name and stores it; false when cancelled or refused (with a message box).
bool renameModelWithDialog(QWidget* parent, PreferenceStore& store, const ModelRecord& model);
/// Says what goes and what stays, asks, and deletes; false when cancelled or refused.
bool deleteModelWithDialog(QWidget* parent, PreferenceStore& store, const ModelRecord& model);
/// A new (or empty) folder the user names for the export; "" when cancelled. It opens where the
/// last export went (else the home folder), with suggestedExportName(); the place is remembered.
QString exportFolderWithDialog(QWidget* parent, const ModelRecord& model);
/// A folder name for a model's export: its name in lower case with dashes ("d2dpo run 2 step 300"
/// -> "d2dpo-run-2-step-300"), "d2dpo-" in front unless it starts so already.
QString suggestedExportName(const ModelRecord& model);

} // namespace d2dpo::ui
