// SPDX-License-Identifier: GPL-3.0-or-later
// Code brought in (a TorchScript model) may never return, and nothing can interrupt it from
// outside: a call into it runs on a thread of its own while the caller waits at most a time limit
// and listens to its stop token. A call that does not end in time is abandoned: its thread keeps
// what it uses alive and is left to run, and abandonedCalls() counts it, so that a command-line
// program ends at once (std::_Exit) instead of destroying what the thread may still touch.
#pragma once

#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include "base/trainlistener.h"

namespace d2dpo {

enum class CallEnd { Returned, TimedOut, Stopped };

/// How many calls were abandoned in this process (they may still be running).
int abandonedCalls();
void countAbandonedCall();

/// Runs `call` on its own thread and waits up to `seconds`, or until `stop` is requested. When it
/// returns (or throws, rethrown here) in time: Returned. Otherwise the thread is detached, holding
/// `call` (and what it captured) for as long as it runs.
template <typename Call> CallEnd callWithin(double seconds, const StopToken* stop, Call call)
{
    auto task = std::make_shared<std::packaged_task<void()>>(std::move(call));
    std::future<void> done = task->get_future();
    std::thread worker([task] { (*task)(); });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (done.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
        const bool stopped = stop && stop->stopRequested();
        if (stopped || std::chrono::steady_clock::now() >= deadline) {
            worker.detach();
            countAbandonedCall();
            return stopped ? CallEnd::Stopped : CallEnd::TimedOut;
        }
    }
    worker.join();
    done.get(); // its exception, if it threw
    return CallEnd::Returned;
}

} // namespace d2dpo
