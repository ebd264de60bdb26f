// SPDX-License-Identifier: GPL-3.0-or-later
// The window an export in the background shows: the model's files being written (seconds), then
// the samples' plan, how many are drawn and the time left, with a Skip samples that keeps the files
// (a Cancel before them writes nothing). Not modal: the rest of the window stays usable.
#pragma once

class QString;
class QWidget;

namespace d2dpo::ui {

class ModelExporter;

/// Opens the progress window of the export `exporter` has just started; it closes itself when the
/// export ends.
void showExportProgress(ModelExporter* exporter, QWidget* parent, const QString& modelName, const QString& folder);

} // namespace d2dpo::ui
