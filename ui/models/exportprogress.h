// SPDX-License-Identifier: GPL-3.0-or-later
// The window an export in the background shows while it draws its samples (the long part: about
// 40 s at an 8M-parameter model): how many of them, the time left, and a Cancel that stops the
// draw before any file is written. Not modal: the rest of the window stays usable.
#pragma once

class QString;
class QWidget;

namespace d2dpo::ui {

class ModelExporter;

/// Opens the progress window of the export `exporter` has just started; it closes itself when the
/// export ends.
void showExportProgress(ModelExporter* exporter, QWidget* parent, const QString& modelName, const QString& folder);

} // namespace d2dpo::ui
