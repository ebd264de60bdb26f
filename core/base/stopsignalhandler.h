// SPDX-License-Identifier: GPL-3.0-or-later
// The SIGINT/SIGTERM plumbing the command line (cli/stopsignals) and the desktop application
// (ui/shell/closeonsignals) share: both stop work on the first signal and let a second one end the
// process at once.
#pragma once

namespace d2dpo {

/// Installs `handler` for SIGINT and SIGTERM (SA_RESTART).
void installStopSignalHandler(void (*handler)(int));

/// Async-signal-safe: both signals back to their default action, so the next one ends the process.
void restoreDefaultStopSignals() noexcept;

} // namespace d2dpo
