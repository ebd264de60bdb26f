// SPDX-License-Identifier: GPL-3.0-or-later
// The time left of a job as the views say it ("about 0:26 left", "0:26"), from the clock that has timed
// the job since it began and how far it is: base/timeutil.h's secondsLeft, the one estimate.
#pragma once

#include <QElapsedTimer>
#include <QString>

namespace d2dpo::ui {

/// "about 0:26 left" for `done` of `total` units after `clock`'s time; empty before any progress.
QString timeLeft(const QElapsedTimer& clock, double done, qint64 total);
/// The same time as a clock reads it: "0:26", or "–" while unknown.
QString clockLeft(const QElapsedTimer& clock, double done, qint64 total);

} // namespace d2dpo::ui
