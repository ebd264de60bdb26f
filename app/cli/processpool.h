// SPDX-License-Identifier: GPL-3.0-or-later
// Runs this program's own subcommands as child processes, a few at a time, each with its output
// in a log file: how `d2dpo study` uses the cores (one intra-op thread per child).
#pragma once

#include <string>
#include <vector>

#include "base/trainlistener.h"

namespace d2dpo::cli {

struct ChildJob {
    std::string name;              ///< for the progress lines
    std::vector<std::string> args; ///< after the program name
    std::string logPath;
};

struct PoolOutcome {
    std::vector<std::string> failed;    ///< "name (exit 1; see log)"
    std::vector<std::string> succeeded; ///< the names of the jobs that exited with 0
    bool stopped = false;
};

/// Runs the jobs, at most `parallel` at once, each in a process group of its own. On a stop request
/// no job is started and the running ones get one SIGTERM (they stop as on Ctrl-C, writing what
/// they have) and are waited for.
PoolOutcome runChildren(const std::vector<ChildJob>& jobs, int parallel, const StopToken& stop);

} // namespace d2dpo::cli
