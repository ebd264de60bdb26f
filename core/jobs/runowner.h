// SPDX-License-Identifier: GPL-3.0-or-later
// Whose a running run is. The store lists a run as running while its process holds the run's lock
// file; one whose process died is marked interrupted when the store is opened (base/runlock.h).
// The desktop's past runs, its live follower and the CLI's record-run all ask this one question.
#pragma once

#include <string>

namespace d2dpo {

struct RunRecord;

/// Whether `run` trains in another process (another window, the CLI, another machine on a team
/// store): it is running and is not the caller's own, known by `ownLockPath`, the lock file of the
/// run the caller trains now ("" when it trains none).
bool runsInAnotherProcess(const RunRecord& run, const std::string& ownLockPath);

} // namespace d2dpo
