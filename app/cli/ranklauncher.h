// SPDX-License-Identifier: GPL-3.0-or-later
// `d2dpo train --nproc N` (and `d2dpo pairs --nproc N`): this machine's share of a data-parallel
// run started as torchrun starts one. The launcher serves the rendezvous store (core/distributed/rendezvoushost.h) on 127.0.0.1,
// starts N workers of this program with the same command line less --nproc and torchrun's
// variables (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), and watches them:
// - Ctrl-C or SIGTERM reaches each worker once (they stop together after the step under way);
// - a worker that fails or dies breaks its peers' connections, and they end stopped on their own;
//   any still running after the group's timeout and a grace period is killed;
// - the launcher dying (even by kill -9) sends each worker SIGTERM.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/launchenvironment.h"
#include "base/result.h"
#include "base/trainlistener.h"

namespace CLI {
class App;
}

namespace d2dpo::cli {

struct LocalRanks {
    int processes = 2;
    std::vector<std::string> args; ///< each worker's arguments, after the program's name
    int groupTimeoutSeconds = 300;
    std::string command = "train"; ///< for messages: "d2dpo train: ..."
    /// Rank 0 goes on alone when another rank fails (a parallel draw stores the others' pairs),
    /// so the launcher gives it no deadline then; a run's ranks stop together instead.
    bool mainOutlivesFailures = false;
};

/// Runs the workers to their end; the exit code is rank 0's, or a failed worker's when rank 0
/// succeeded (128 + the signal's number for one a signal ended).
int runLocalRanks(const LocalRanks& ranks, const StopToken& stop);

/// The launch this process is part of (torchrun's variables), or why the variables are wrong;
/// `--nproc` over 1 under a launcher is refused (the workers would start workers).
Result<std::optional<LaunchEnvironment>> launchOf(int nproc);

/// `--nproc N`: this command again in N local workers, each with its share of the cores unless
/// the command line gives --threads; runs them to their end (runLocalRanks). `ranks` gives the
/// timeout, the command's name and how failures are met; its processes and arguments are set here.
int runAsLocalRanks(int nproc, LocalRanks ranks);

/// Adds --nproc (1..kMaxWorldSize) and --group-timeout (1 s..24 h) to `command`, each with the
/// help that says what it means there.
void addLaunchOptions(CLI::App* command, int& nproc, int& groupTimeoutSeconds, const std::string& nprocHelp,
                      const std::string& groupTimeoutHelp);

/// This process's own arguments (after the program's name) without `option` and its value
/// (`--nproc 2` or `--nproc=2`), read from /proc/self/cmdline.
std::vector<std::string> ownArgumentsWithout(const std::string& option);

} // namespace d2dpo::cli
