// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/shell/screenfit.h"

#include <QEvent>
#include <QObject>
#include <QPointer>
#include <QScreen>
#include <QTimer>
#include <QWidget>

#include <algorithm>

namespace d2dpo::ui {

namespace {

/// The frame's extents come from the window manager some time after the first show.
constexpr int kFrameSettleMs = 300;

void pullFrameInside(QWidget* window)
{
    if (!window->isVisible() || window->isMaximized() || window->isFullScreen() || !window->screen())
        return;
    const QRect available = window->screen()->availableGeometry();
    const QRect frame = window->frameGeometry();
    const QSize extra = frame.size() - window->size(); // the frame's own width and height
    const QSize fits = (available.size() - extra).expandedTo(window->minimumSize());
    if (window->width() > fits.width() || window->height() > fits.height())
        window->resize(window->size().boundedTo(fits));
    const QRect now = window->frameGeometry();
    const int x = std::clamp(now.left(), available.left(), std::max(available.left(), available.right() - now.width() + 1));
    const int y = std::clamp(now.top(), available.top(), std::max(available.top(), available.bottom() - now.height() + 1));
    if (x != now.left() || y != now.top())
        window->move(x, y);
}

class FrameWatcher final : public QObject {
public:
    using QObject::QObject;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() == QEvent::Show) { // the first show only: later, where the window is is the user's
            QPointer<QWidget> window = static_cast<QWidget*>(watched);
            QTimer::singleShot(kFrameSettleMs, window, [window] {
                if (window)
                    pullFrameInside(window);
            });
            watched->removeEventFilter(this);
            deleteLater();
        }
        return false;
    }
};

} // namespace

void sizeWithinScreen(QWidget* window, QSize wanted)
{
    if (const QScreen* screen = window->screen())
        wanted = wanted.boundedTo(screen->availableGeometry().size() - kFrameAllowance);
    window->resize(wanted); // never below the window's least size: Qt keeps that
}

void keepFrameOnScreen(QWidget* window) { window->installEventFilter(new FrameWatcher(window)); }

} // namespace d2dpo::ui
