// SPDX-License-Identifier: GPL-3.0-or-later
// Ctrl-C (SIGINT) and SIGTERM during a long command stop it as the Stop button does: the current
// step finishes, a checkpoint is written, the run is recorded as stopped, and the command exits
// with 128 + the signal's number (130 for Ctrl-C). A second signal ends the process at once.
#pragma once

#include "base/trainlistener.h"

namespace d2dpo::cli {

/// What the first signal stops, for the sentence it prints: a training step (and a checkpoint is
/// written), an import (whose model is written unmeasured once it has passed its checks), or a
/// label study (which writes its folder only when it ends, so nothing).
enum class SignalStops { TrainingStep, Import, LabelStudy, Export, Comparison };

/// Installs the handlers (once) and returns the token they raise.
const StopToken& stopOnSignals(SignalStops what = SignalStops::TrainingStep);

/// 0 until a stop signal arrives; then its number.
int stopSignal();

/// The exit code of a command that stopped on a signal (128 + its number), else `otherwise`.
int exitCodeAfterStop(int otherwise);

} // namespace d2dpo::cli
