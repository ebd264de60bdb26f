// SPDX-License-Identifier: GPL-3.0-or-later
// The processes of one data-parallel run, on LibTorch's c10d: the rendezvous through c10d's
// TCPStore at the master's address, then a Gloo process group over TCP. The collectives a
// training run needs: sums of gradients in buckets, tensors and bytes sent from rank 0. A rank
// that dies breaks its peers' connections at once; one that hangs is given up after the timeout.
// Either way every collective on the other ranks throws GroupLost: the run ends on every rank.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/types.h>

#include "base/launchenvironment.h"
#include "base/result.h"

namespace d2dpo {

/// A collective that could not complete: a rank left, or did not answer within the timeout.
struct GroupLost : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class TrainingGroup {
public:
    /// Gradients are summed in buckets of at most this many bytes, each sent as soon as it is
    /// packed (DistributedDataParallel's default cap is 25 MiB).
    static constexpr int64_t kBucketBytes = int64_t(25) << 20;

    /// Joins the run `launch` names: rank 0 serves the rendezvous store (unless the launcher's agent
    /// does), every rank connects within `timeout`, and Gloo's pairs are set up over TCP on the
    /// interface that reaches the master (GLOO_SOCKET_IFNAME names one). A collective waits at most
    /// `timeout` for the slowest rank.
    static Result<std::shared_ptr<TrainingGroup>> join(const LaunchEnvironment& launch, std::chrono::seconds timeout);

    ~TrainingGroup();
    TrainingGroup(const TrainingGroup&) = delete;
    TrainingGroup& operator=(const TrainingGroup&) = delete;

    int rank() const { return m_launch.rank; }
    int size() const { return m_launch.worldSize; }
    bool isMain() const { return m_launch.rank == 0; }
    const LaunchEnvironment& launch() const { return m_launch; }
    std::chrono::seconds timeout() const { return m_timeout; }

    /// Each tensor replaced by its sum over every rank, in place. Contiguous tensors of one dtype
    /// per bucket are packed into one buffer; all buckets are sent before the first is waited for.
    void allReduceSum(const std::vector<torch::Tensor>& tensors);

    /// Every rank's tensors replaced by rank 0's (the same shapes and dtypes on every rank).
    void broadcastFromMain(const std::vector<torch::Tensor>& tensors);

    /// Rank 0's `bytes` on every rank (the others' argument is ignored), through the rendezvous
    /// store: for small messages that rank 0 may take a long time to produce (its setup, a
    /// reference measurement), waited for up to `wait`, not the collectives' timeout.
    std::string shareFromMain(const std::string& bytes, std::chrono::seconds wait);

    /// Every rank's `bytes` on rank 0, in rank order (the others get an empty list), through the
    /// rendezvous store: each rank leaves its message and may go; rank 0 waits up to `wait` for
    /// the slowest, and a rank whose message has not come by then is nullopt. For long work done
    /// side by side (a parallel draw of pairs), not for steps.
    std::vector<std::optional<std::string>> gatherToMain(const std::string& bytes, std::chrono::seconds wait);

private:
    struct Engine;
    TrainingGroup(LaunchEnvironment launch, std::chrono::seconds timeout, std::unique_ptr<Engine> engine);
    /// Runs a collective, turning c10d's and Gloo's failures into GroupLost with the rank said.
    template <typename Body> void collective(const char* what, Body body);

    LaunchEnvironment m_launch;
    std::chrono::seconds m_timeout;
    std::unique_ptr<Engine> m_engine;
    int64_t m_shared = 0;   ///< messages shared so far: each gets a key of its own
    int64_t m_gathered = 0; ///< gathers so far: each gets keys of its own
};

} // namespace d2dpo
