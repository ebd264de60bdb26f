// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/storewait.h"

#include <chrono>
#include <thread>

namespace d2dpo {

Status retryWhileUnreachable(const std::function<Status()>& attempt, const std::string& what, TrainListener& listener,
                             const StopToken& stop, int limitSeconds)
{
    using Clock = std::chrono::steady_clock;
    Status result = attempt();
    if (result || result.errorCode() != ErrorCode::Unreachable || stop.stopRequested() || limitSeconds <= 0)
        return result;
    listener.onLog("the store cannot be reached to record " + what + " (" + result.error() + "); waiting up to " +
                   std::to_string(limitSeconds) + " s for it, trying every 2 s (stop to give up)");
    const auto deadline = Clock::now() + std::chrono::seconds(limitSeconds);
    while (Clock::now() < deadline) {
        const auto nextTry = std::min(deadline, Clock::now() + std::chrono::seconds(2));
        while (Clock::now() < nextTry) {
            if (stop.stopRequested())
                return result;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        result = attempt();
        if (result) {
            listener.onLog("the store is back: " + what + " recorded");
            return result;
        }
        if (result.errorCode() != ErrorCode::Unreachable)
            return result;
    }
    return result;
}

} // namespace d2dpo
