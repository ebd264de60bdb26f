// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/runstatus.h"

namespace d2dpo {

const char* toString(RunStatus status)
{
    switch (status) {
    case RunStatus::Running: return "running";
    case RunStatus::Completed: return "completed";
    case RunStatus::Stopped: return "stopped";
    case RunStatus::Interrupted: return "interrupted";
    case RunStatus::Failed: return "failed";
    }
    return "unknown";
}

std::optional<RunStatus> runStatusFromString(const std::string& text)
{
    for (RunStatus s : {RunStatus::Running, RunStatus::Completed, RunStatus::Stopped, RunStatus::Interrupted,
                        RunStatus::Failed})
        if (text == toString(s))
            return s;
    return std::nullopt;
}

} // namespace d2dpo
