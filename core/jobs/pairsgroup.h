// SPDX-License-Identifier: GPL-3.0-or-later
// A parallel `d2dpo pairs`: the processes torchrun's variables (or --nproc) name meet through
// c10d's rendezvous store (distributed/traininggroup.h); each draws its share with a seed of its
// own; rank 0 gathers every rank's draw and alone stores them, merged (labeling/rankpairs.h).
// Torch-free: the command includes it.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "base/launchenvironment.h"
#include "base/result.h"
#include "labeling/rankpairs.h"

namespace d2dpo {

class TrainingGroup;

class PairsGroup {
public:
    /// Joins the other ranks within `timeout`, which also bounds how long rank 0 waits for the
    /// slowest rank's pairs once its own are drawn.
    static Result<std::unique_ptr<PairsGroup>> join(const LaunchEnvironment& launch, std::chrono::seconds timeout);
    ~PairsGroup();

    int rank() const;
    int size() const;
    bool isMain() const { return rank() == 0; }
    /// This rank's share of `count` pairs, and the seed it draws them from.
    int64_t shareOf(int64_t count) const { return rankShareOf(count, rank(), size()); }
    uint64_t seedOf(uint64_t seed) const { return rankSeedOf(seed, rank()); }

    /// Rank 0 says whether the draw goes ahead: "" once it has the store and the model, else why
    /// not. The others wait for its word (up to the timeout) before they draw or read the store,
    /// and get an error when it failed or never said.
    Status startFromMain(const std::string& mainError);

    /// Hands this rank's draw (or its failure) to rank 0. On rank 0: every rank's draw in rank
    /// order, a rank that handed nothing over within the timeout after rank 0's own draw (it died,
    /// hangs, or is far slower) standing as a failed one; an error when the group is lost.
    Result<std::vector<RankDraw>> gather(const RankDraw& mine);

private:
    explicit PairsGroup(std::shared_ptr<TrainingGroup> group);
    std::shared_ptr<TrainingGroup> m_group;
};

} // namespace d2dpo
