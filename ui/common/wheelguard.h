// SPDX-License-Identifier: GPL-3.0-or-later
// The mouse wheel scrolls the page, never a setting that happens to pass under the pointer: a
// drop-down, spin box or slider changes with the wheel only once it has been clicked (it has the
// focus). Installed once on the application, so every form and dialog behaves the same.
#pragma once

#include <QObject>

class QApplication;

namespace d2dpo::ui {

class WheelGuard final : public QObject {
    Q_OBJECT

public:
    using QObject::QObject;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
};

/// Installs one WheelGuard on the application (a second call does nothing).
void installWheelGuard(QApplication& app);

} // namespace d2dpo::ui
