// SPDX-License-Identifier: GPL-3.0-or-later
// File > Import model's job as the desktop's worker thread runs jobs (TrainRunner): it ends as
// completed, stopped (nothing written: the dialog's Cancel) or failed.
#pragma once

#include "base/trainlistener.h"
#include "jobs/importjob.h"

namespace d2dpo::ui {

/// Runs the import; the step-less phases come as PhaseForwarder's log lines, the measurement's
/// batches as progress events counting samples, its figures as an evaluation.
FinishedEvent importAsTrainJob(const ImportJobSpec& job, TrainListener& listener, const StopToken& stop);

} // namespace d2dpo::ui
