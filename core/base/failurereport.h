// SPDX-License-Identifier: GPL-3.0-or-later
// What a user reads when something deep down fails (an out-of-memory error in LibTorch, a CUDA
// error): the first line of the exception's message, never a C++ stack trace. The whole text,
// trace included, is appended to a log file the message names, for a bug report.
#pragma once

#include <exception>
#include <string>

namespace d2dpo {

/// $XDG_STATE_HOME/d2dpo-studio/errors.log, else ~/.local/state/d2dpo-studio/errors.log.
std::string failureLogPath();

/// The message of `what` without a stack trace (at most 300 characters); when there was a trace,
/// the whole text goes to failureLogPath() and the message says so.
std::string userMessage(const std::string& what);
inline std::string userMessage(const std::exception& e) { return userMessage(std::string(e.what())); }

} // namespace d2dpo
