// SPDX-License-Identifier: GPL-3.0-or-later
// The first launch: with no model in the store, the small reference model shipped in the
// resources (binary-integers, N = 10; `d2dpo pretrain` regenerates it) is copied to the data
// folder so that pairs can be generated at once, without the user knowing the command line.
#pragma once

#include <QString>

namespace d2dpo::ui {

/// Copies the shipped reference checkpoint next to the store (once) and returns its path, or
/// an empty string with `error` set.
QString installShippedReference(const QString& storePath, QString& error);

} // namespace d2dpo::ui
