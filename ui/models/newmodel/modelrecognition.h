// SPDX-License-Identifier: GPL-3.0-or-later
// What File > Import model says under its model field as the path changes: for published weights,
// the architecture their config.json describes (a few bytes, read at once) or why they cannot be
// read as one; for a TorchScript file, nothing (it is checked when the import runs).
#pragma once

#include <QString>

namespace d2dpo::ui {

/// Whether `path` names published weights (a folder, or a .safetensors file).
bool isWeightsPath(const QString& path);

/// The line to show (rich text), or "" for a path that is not published weights.
QString modelRecognition(const QString& path);

/// The vocabulary file beside a TorchScript model, when one is there: STEM.vocab.json (the
/// examples' name for esm.pt's), STEM.vocabulary.json, vocabulary.json (an export's) or
/// vocab.json; "" when none is.
QString vocabularyBeside(const QString& modelPath);

} // namespace d2dpo::ui
