// SPDX-License-Identifier: GPL-3.0-or-later
// Where this process stands in a multi-process run, as torchrun and cluster schedulers say it:
// RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT in the environment (PyTorch's env://
// rendezvous). Read once by the CLI; the training job joins the group it names (distributed/).
// Torch-free: the job's spec carries it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"

namespace d2dpo {

struct LaunchEnvironment {
    int rank = 0;            ///< this process's place in the run, 0 .. worldSize - 1; rank 0 writes
    int worldSize = 1;       ///< how many processes train together
    int localRank = 0;       ///< its place on its machine: picks the GPU when each rank has one
    std::string masterAddress = "127.0.0.1"; ///< where rank 0's rendezvous store listens
    int masterPort = 29500;
    /// torchrun's agent already serves the rendezvous store at the master's port
    /// (TORCHELASTIC_USE_AGENT_STORE=True, or `d2dpo train --nproc`): every rank is its client.
    bool agentServesStore = false;
    /// torchrun's restart of the workers (TORCHELASTIC_RESTART_COUNT): each attempt keeps its keys
    /// apart in the agent's store, so a restart never reads a dead attempt's addresses.
    int restartCount = 0;

    bool isMain() const { return rank == 0; }
};

/// The largest world a run accepts: a bound on a number read from the environment.
inline constexpr int kMaxWorldSize = 4096;

/// The launch the environment describes: none when neither RANK nor WORLD_SIZE is set (one
/// process, as before), else every variable checked (a number in range, an address, a port).
/// `variable` reads one variable (nullopt when unset); by default the process environment.
Result<std::optional<LaunchEnvironment>>
launchFromEnvironment(const std::function<std::optional<std::string>(const char*)>& variable = {});

/// The variables a launcher sets for `launch` (name, value), in the order torchrun sets them.
std::vector<std::pair<std::string, std::string>> environmentFor(const LaunchEnvironment& launch);

/// "rank 1 of 2 (local rank 1), rendezvous at 127.0.0.1:29500", for logs and the run's record.
std::string describeLaunch(const LaunchEnvironment& launch);

/// Who started a run and where, as its record keeps it (the Train view says it of a run that
/// lives elsewhere): the login name and this machine's host name ("" when unknown).
std::string currentUserName();
std::string currentHostName();

} // namespace d2dpo
