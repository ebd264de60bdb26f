// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/timeleft.h"

#include <QCoreApplication>

#include "base/timeutil.h"

namespace d2dpo::ui {

QString timeLeft(const QElapsedTimer& clock, double done, qint64 total)
{
    if (!(done > 0) || !clock.isValid())
        return {};
    const double left = secondsLeft(double(clock.elapsed()) / 1000.0, done, total);
    return QCoreApplication::translate("d2dpo::ui::timeLeft", "about %1 left")
        .arg(QString::fromStdString(clockDuration(left)));
}

} // namespace d2dpo::ui
