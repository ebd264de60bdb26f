// SPDX-License-Identifier: GPL-3.0-or-later
// A main window that fits its screen with the window manager's frame around it: on a 1024x640
// laptop under openbox the frame adds a title bar of about 25-30 px, and a window sized to the
// whole available area pushed its status bar off the bottom edge.
#pragma once

#include <QSize>

class QWidget;

namespace d2dpo::ui {

/// Room kept for a window manager's frame: a title bar of 30 px and borders.
inline constexpr QSize kFrameAllowance(16, 40);

/// Sizes `window` to `wanted`, bounded by its screen's available area less kFrameAllowance.
void sizeWithinScreen(QWidget* window, QSize wanted);

/// Once `window` is first shown and framed, pulls the frame back inside the screen's available area
/// (a smaller size, never below the window's minimum, and a move) where it sticks out: a frame
/// taller than the allowance, or a restored position from another screen.
void keepFrameOnScreen(QWidget* window);

} // namespace d2dpo::ui
