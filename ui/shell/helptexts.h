// SPDX-License-Identifier: GPL-3.0-or-later
// The Help menu's texts: the workflow in a few steps, and About (version, licence, the Qt and
// LibTorch versions, the store in use).
#pragma once

#include <QString>

namespace d2dpo::ui {

QString workflowText();
QString aboutText(const QString& storePath);

} // namespace d2dpo::ui
