// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/trainlistener.h"

namespace d2dpo {

const char* toString(RunStatus status)
{
    switch (status) {
    case RunStatus::Completed:
        return "completed";
    case RunStatus::Stopped:
        return "stopped";
    case RunStatus::Failed:
        return "failed";
    }
    return "unknown";
}

} // namespace d2dpo
