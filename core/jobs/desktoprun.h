// SPDX-License-Identifier: GPL-3.0-or-later
// How the desktop application starts a D2-DPO run, where it differs from `d2dpo train`.
#pragma once

#include "jobs/dpojob.h"
#include "jobs/runfolder.h"

namespace d2dpo {

/// Runs started from the desktop write a checkpoint at every evaluation, so the models listed for
/// a stopped run are the ones whose metrics were measured.
inline void checkpointAtEveryEvaluation(DpoScheduleConfig& schedule) { schedule.checkpointEvery = schedule.evalEvery; }

/// Runs started from the desktop leave one core to the GUI thread, beyond those other processes
/// keep busy (2 training threads on 2 cores stalled the GUI thread for 48 ms, 1 for 7 ms).
inline void leaveACoreForTheGui(DpoJobSpec& job) { job.reservedCores = 1; }

} // namespace d2dpo
