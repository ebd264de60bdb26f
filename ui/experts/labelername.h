// SPDX-License-Identifier: GPL-3.0-or-later
// The labeler's name on this machine: where it is remembered and how it is asked for, for the
// studio's start and File ▸ Change labeler… (who labels on a store: labeling/labeleridentity.h).
#pragma once

#include <QString>

class QWidget;

namespace d2dpo::ui {

/// The name remembered by the last sitting (QSettings), "" if none.
QString rememberedLabeler();
void rememberLabeler(const QString& name);

/// Asks for a name, offering `current`; the trimmed answer, or "" when cancelled or left empty.
QString askLabelerName(QWidget* parent, const QString& title, const QString& current);

} // namespace d2dpo::ui
