// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/stopsignals.h"

#include "base/stopsignalhandler.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <unistd.h>

namespace d2dpo::cli {

namespace {

StopToken g_stop;
std::atomic<int> g_signal{0};
std::atomic<const char*> g_message{nullptr};

extern "C" void onStopSignal(int signal)
{
    // Only async-signal-safe calls here: atomic stores, sigaction(2) and write(2).
    const int savedErrno = errno;
    g_signal.store(signal); // before the stop: whoever sees the stop finds the signal
    g_stop.requestStop();
    // Both signals get their default action back: a second one (Ctrl-C, or SIGTERM after
    // Ctrl-C) ends the process at once.
    restoreDefaultStopSignals();
    const char* message = g_message.load();
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, message, std::strlen(message));
    errno = savedErrno;
}

} // namespace

const StopToken& stopOnSignals(SignalStops what)
{
    switch (what) {
    case SignalStops::Import:
        g_message.store("\nd2dpo: stopping: a model that has passed its checks is written without its measurement "
                        "once its forward returns (within 1.5 s), otherwise nothing is; press Ctrl-C again to end at "
                        "once\n");
        break;
    case SignalStops::LabelStudy:
        g_message.store("\nd2dpo: stopping after the current training step; a label study writes its folder only "
                        "when it ends, so nothing is written; press Ctrl-C again to end at once\n");
        break;
    case SignalStops::Export:
        g_message.store("\nd2dpo: stopping the export before anything is written; press Ctrl-C again to end at once\n");
        break;
    case SignalStops::Comparison:
        g_message.store("\nd2dpo: stopping the comparison's draw: nothing is stored; press Ctrl-C again to end at once\n");
        break;
    case SignalStops::TrainingStep:
        g_message.store("\nd2dpo: stopping after the current step (a checkpoint is written); press Ctrl-C again "
                        "to end at once\n");
        break;
    }
    static const bool installed = [] {
        installStopSignalHandler(onStopSignal);
        return true;
    }();
    (void)installed;
    return g_stop;
}

int stopSignal() { return g_signal.load(); }

int exitCodeAfterStop(int otherwise)
{
    const int signal = stopSignal();
    return signal != 0 ? 128 + signal : otherwise;
}

} // namespace d2dpo::cli
