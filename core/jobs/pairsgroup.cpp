// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/pairsgroup.h"

#include <algorithm>

#include "distributed/traininggroup.h"

namespace d2dpo {

PairsGroup::PairsGroup(std::shared_ptr<TrainingGroup> group) : m_group(std::move(group)) {}

PairsGroup::~PairsGroup() = default;

Result<std::unique_ptr<PairsGroup>> PairsGroup::join(const LaunchEnvironment& launch, std::chrono::seconds timeout)
{
    if (timeout.count() < 1)
        return makeError("the group's timeout must be at least 1 second");
    auto group = TrainingGroup::join(launch, timeout);
    if (!group)
        return makeError(group.error());
    return std::unique_ptr<PairsGroup>(new PairsGroup(group.value()));
}

int PairsGroup::rank() const
{
    return m_group->rank();
}

int PairsGroup::size() const
{
    return m_group->size();
}

Status PairsGroup::startFromMain(const std::string& mainError)
{
    std::string word;
    try {
        // A leading character, so that "go" is never an empty message.
        word = m_group->shareFromMain((mainError.empty() ? "+" : "-") + mainError, m_group->timeout());
    } catch (const GroupLost& lost) {
        return makeError(lost.what());
    }
    if (isMain() || (!word.empty() && word.front() == '+'))
        return Ok{};
    return makeError("rank 0 could not start the draw: " + word.substr(std::min<size_t>(1, word.size())));
}

Result<std::vector<RankDraw>> PairsGroup::gather(const RankDraw& mine)
{
    std::vector<std::optional<std::string>> received;
    try {
        received = m_group->gatherToMain(encodeRankDraw(mine), m_group->timeout());
    } catch (const GroupLost& lost) {
        return makeError(std::string(lost.what()) + "; nothing was stored");
    }
    std::vector<RankDraw> draws;
    for (size_t r = 0; r < received.size(); ++r) {
        if (!received[r]) {
            RankDraw missing;
            missing.error = "handed over no pairs within " + std::to_string(m_group->timeout().count()) +
                            " s of rank 0's own (it died, hangs, or is far slower: --group-timeout)";
            draws.push_back(std::move(missing));
            continue;
        }
        auto draw = decodeRankDraw(*received[r]);
        if (!draw) // a rank of another build: its pairs cannot be trusted to mean the same
            return makeError("rank " + std::to_string(r) + ": " + draw.error() + "; nothing was stored");
        draws.push_back(std::move(draw.value()));
    }
    return draws;
}

} // namespace d2dpo
