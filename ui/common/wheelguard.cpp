// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/common/wheelguard.h"

#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QEvent>

namespace d2dpo::ui {

namespace {

bool changesWithTheWheel(const QObject* object)
{
    return qobject_cast<const QComboBox*>(object) || qobject_cast<const QAbstractSpinBox*>(object) ||
           (qobject_cast<const QAbstractSlider*>(object) && !object->inherits("QScrollBar"));
}

} // namespace

bool WheelGuard::eventFilter(QObject* watched, QEvent* event)
{
    if ((event->type() != QEvent::Wheel && event->type() != QEvent::Polish) || !changesWithTheWheel(watched))
        return false; // every event of the application passes here: the cheap test first
    auto* widget = static_cast<QWidget*>(watched);
    if (event->type() == QEvent::Polish && widget->focusPolicy() == Qt::WheelFocus) {
        // Qt gives a WheelFocus widget the focus as the wheel passes over it, before any filter
        // sees the event; a click (or Tab) still focuses it.
        widget->setFocusPolicy(Qt::StrongFocus);
    } else if (event->type() == QEvent::Wheel && !widget->hasFocus()) {
        // Not accepted: Qt hands the event to the parents, and the scroll area around scrolls.
        event->ignore();
        return true;
    }
    return false;
}

void installWheelGuard(QApplication& app)
{
    if (app.findChild<WheelGuard*>(QString(), Qt::FindDirectChildrenOnly))
        return;
    app.installEventFilter(new WheelGuard(&app));
}

} // namespace d2dpo::ui
