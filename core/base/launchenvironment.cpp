// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/launchenvironment.h"

#include <charconv>
#include <climits>
#include <cstdlib>
#include <pwd.h>
#include <unistd.h>
#include <vector>

namespace d2dpo {

namespace {

std::optional<std::string> processVariable(const char* name)
{
    const char* value = std::getenv(name);
    return value ? std::optional<std::string>(value) : std::nullopt;
}

/// `text` as a whole number in [low, high], or why not (naming the variable).
Result<int> wholeNumber(const char* name, const std::string& text, int low, int high)
{
    int value = 0;
    const char* end = text.data() + text.size();
    const auto [at, error] = std::from_chars(text.data(), end, value);
    if (text.empty() || error != std::errc() || at != end || value < low || value > high)
        return makeError(std::string(name) + " must be a whole number from " + std::to_string(low) + " to " +
                         std::to_string(high) + ", not '" + text + "'");
    return value;
}

} // namespace

Result<std::optional<LaunchEnvironment>>
launchFromEnvironment(const std::function<std::optional<std::string>(const char*)>& variable)
{
    const auto read = variable ? variable : processVariable;
    const auto rankText = read("RANK");
    const auto worldText = read("WORLD_SIZE");
    if (!rankText && !worldText)
        return std::optional<LaunchEnvironment>();
    if (!rankText || !worldText)
        return makeError("a multi-process launch sets both RANK and WORLD_SIZE (as torchrun does); only " +
                         std::string(rankText ? "RANK" : "WORLD_SIZE") + " is set");
    LaunchEnvironment launch;
    const auto world = wholeNumber("WORLD_SIZE", *worldText, 1, kMaxWorldSize);
    if (!world)
        return makeError(world.error());
    launch.worldSize = world.value();
    const auto rank = wholeNumber("RANK", *rankText, 0, launch.worldSize - 1);
    if (!rank)
        return makeError(rank.error());
    launch.rank = rank.value();
    if (const auto local = read("LOCAL_RANK")) {
        const auto localRank = wholeNumber("LOCAL_RANK", *local, 0, launch.worldSize - 1);
        if (!localRank)
            return makeError(localRank.error());
        launch.localRank = localRank.value();
    } else {
        launch.localRank = launch.rank;
    }
    if (const auto address = read("MASTER_ADDR")) {
        if (address->empty() || address->size() > 253 || address->find_first_of(" \t\n/") != std::string::npos)
            return makeError("MASTER_ADDR must be a host name or an address, not '" + *address + "'");
        launch.masterAddress = *address;
    } else if (launch.worldSize > 1) {
        return makeError("MASTER_ADDR is not set: name the host where rank 0's rendezvous store listens");
    }
    if (const auto port = read("MASTER_PORT")) {
        const auto number = wholeNumber("MASTER_PORT", *port, 1, 65535);
        if (!number)
            return makeError(number.error());
        launch.masterPort = number.value();
    } else if (launch.worldSize > 1) {
        return makeError("MASTER_PORT is not set: name the port of rank 0's rendezvous store");
    }
    const auto agent = read("TORCHELASTIC_USE_AGENT_STORE");
    launch.agentServesStore = agent && (*agent == "True" || *agent == "true" || *agent == "1");
    if (const auto restarts = read("TORCHELASTIC_RESTART_COUNT")) {
        const auto count = wholeNumber("TORCHELASTIC_RESTART_COUNT", *restarts, 0, 1'000'000);
        if (!count)
            return makeError(count.error());
        launch.restartCount = count.value();
    }
    return std::optional<LaunchEnvironment>(launch);
}

std::vector<std::pair<std::string, std::string>> environmentFor(const LaunchEnvironment& launch)
{
    std::vector<std::pair<std::string, std::string>> variables = {
        {"RANK", std::to_string(launch.rank)},
        {"LOCAL_RANK", std::to_string(launch.localRank)},
        {"WORLD_SIZE", std::to_string(launch.worldSize)},
        {"MASTER_ADDR", launch.masterAddress},
        {"MASTER_PORT", std::to_string(launch.masterPort)},
    };
    if (launch.agentServesStore)
        variables.emplace_back("TORCHELASTIC_USE_AGENT_STORE", "True");
    return variables;
}

std::string describeLaunch(const LaunchEnvironment& launch)
{
    return "rank " + std::to_string(launch.rank) + " of " + std::to_string(launch.worldSize) + " (local rank " +
           std::to_string(launch.localRank) + "), rendezvous at " + launch.masterAddress + ":" +
           std::to_string(launch.masterPort);
}

std::string currentUserName()
{
    if (const passwd* entry = getpwuid(getuid()); entry && entry->pw_name)
        return entry->pw_name;
    const char* user = std::getenv("USER");
    return user ? user : "";
}

std::string currentHostName()
{
    char name[HOST_NAME_MAX + 1] = {};
    return gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
}

} // namespace d2dpo
