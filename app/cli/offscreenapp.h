// SPDX-License-Identifier: GPL-3.0-or-later
// What the command line's drawings into files need (the study's figures, the profile's logos): a
// QApplication on Qt's offscreen platform, whatever DISPLAY says. Built with the desktop only.
#pragma once

#include <memory>

class QApplication;

namespace d2dpo::cli {

/// A QApplication on the offscreen platform when none exists yet (keep it while drawing); null
/// when one does (it is used).
std::unique_ptr<QApplication> offscreenApplication();

} // namespace d2dpo::cli
