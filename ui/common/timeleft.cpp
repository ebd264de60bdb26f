// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/common/timeleft.h"

#include <QCoreApplication>

#include "base/timeutil.h"

namespace d2dpo::ui {

QString clockLeft(const QElapsedTimer& clock, double done, qint64 total)
{
    const double left = clock.isValid() ? secondsLeft(double(clock.elapsed()) / 1000.0, done, total) : -1;
    return QString::fromStdString(clockDuration(left));
}

QString timeLeft(const QElapsedTimer& clock, double done, qint64 total)
{
    if (!(done > 0) || !clock.isValid())
        return {};
    return QCoreApplication::translate("d2dpo::ui::timeLeft", "about %1 left").arg(clockLeft(clock, done, total));
}

} // namespace d2dpo::ui
