// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/runowner.h"

#include "store/preferencestore.h"

namespace d2dpo {

bool runsInAnotherProcess(const RunRecord& run, const std::string& ownLockPath)
{
    return run.status == RunStatus::Running && (ownLockPath.empty() || run.lockPath != ownLockPath);
}

} // namespace d2dpo
