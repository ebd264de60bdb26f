// SPDX-License-Identifier: GPL-3.0-or-later
// A run that cannot reach its team store at the end (the server restarting, a network cut) waits
// for it rather than ending as if all were recorded: it says so, tries again every 2 s, and gives
// up after a while or when asked to stop, so that the caller can say what is left to record.
#pragma once

#include <functional>
#include <string>

#include "base/result.h"
#include "base/trainlistener.h"

namespace d2dpo {

/// Runs `attempt`; while it fails because the store cannot be reached (ErrorCode::Unreachable),
/// tries again every 2 s for at most `limitSeconds`, or until `stop`. `what` names what is being
/// recorded in the one line said through `listener` when the wait begins. The last attempt's
/// Status: ok when it worked.
Status retryWhileUnreachable(const std::function<Status()>& attempt, const std::string& what,
                             TrainListener& listener, const StopToken& stop, int limitSeconds);

} // namespace d2dpo
