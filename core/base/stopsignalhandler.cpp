// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/stopsignalhandler.h"

#include <csignal>

namespace d2dpo {

void installStopSignalHandler(void (*handler)(int))
{
    struct sigaction action {};
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
}

void restoreDefaultStopSignals() noexcept
{
    struct sigaction standard {};
    standard.sa_handler = SIG_DFL;
    sigaction(SIGINT, &standard, nullptr); // sigaction is async-signal-safe
    sigaction(SIGTERM, &standard, nullptr);
}

} // namespace d2dpo
