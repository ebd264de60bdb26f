// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/ranklauncher.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "base/cputhreads.h"
#include "cli/stopsignals.h"
#include "distributed/rendezvoushost.h"

namespace d2dpo::cli {

namespace {

/// After the group's timeout, how long the launcher still gives a worker to write its last
/// checkpoint and record the run before it is killed.
constexpr std::chrono::seconds kGrace{30};

std::string selfPath()
{
    char path[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    return n > 0 ? std::string(path, size_t(n)) : std::string("d2dpo");
}

pid_t startWorker(const std::string& program, const std::vector<std::string>& args,
                  const std::vector<std::pair<std::string, std::string>>& variables)
{
    // Everything the child needs is made before fork(): after it, only async-signal-safe calls.
    std::vector<std::string> environment;
    for (const auto& [name, value] : variables)
        environment.push_back(name + "=" + value);
    for (char** entry = environ; *entry; ++entry) {
        const std::string text = *entry;
        bool replaced = false;
        for (const auto& [name, value] : variables)
            replaced = replaced || text.rfind(name + "=", 0) == 0;
        if (!replaced)
            environment.push_back(text);
    }
    std::vector<char*> envp, argv{const_cast<char*>(program.c_str())};
    for (const std::string& entry : environment)
        envp.push_back(const_cast<char*>(entry.c_str()));
    envp.push_back(nullptr);
    for (const std::string& arg : args)
        argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid != 0)
        return pid;
    // A process group of its own: a Ctrl-C in the terminal reaches only the launcher, which passes
    // one SIGTERM on (a second would end a worker at once, without its checkpoint).
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) // the launcher died before prctl took hold
        _exit(143);
    execve(program.c_str(), argv.data(), envp.data());
    static const char message[] = "d2dpo: cannot start a worker process\n";
    (void)!write(STDERR_FILENO, message, sizeof message - 1);
    _exit(127);
}

int exitCodeOf(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

} // namespace

std::vector<std::string> ownArgumentsWithout(const std::string& option)
{
    std::ifstream file("/proc/self/cmdline", std::ios::binary);
    const std::string all((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    std::vector<std::string> args;
    for (size_t begin = 0; begin < all.size();) {
        const size_t end = all.find('\0', begin);
        args.push_back(all.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
        begin = end == std::string::npos ? all.size() : end + 1;
    }
    std::vector<std::string> kept;
    for (size_t k = 1; k < args.size(); ++k) {
        if (args[k] == option) {
            ++k; // and its value
            continue;
        }
        if (args[k].rfind(option + "=", 0) == 0)
            continue;
        kept.push_back(args[k]);
    }
    return kept;
}

int runLocalRanks(const LocalRanks& ranks, const StopToken& stop)
{
    auto host = RendezvousHost::start("127.0.0.1");
    if (!host) {
        std::fprintf(stderr, "d2dpo %s: error: %s\n", ranks.command.c_str(), host.error().c_str());
        return 1;
    }
    const std::string program = selfPath();
    std::map<pid_t, int> running; // pid -> rank
    std::map<int, int> exitCodes; // rank -> code
    for (int rank = 0; rank < ranks.processes; ++rank) {
        LaunchEnvironment launch;
        launch.rank = rank;
        launch.localRank = rank;
        launch.worldSize = ranks.processes;
        launch.masterAddress = "127.0.0.1";
        launch.masterPort = host.value()->port();
        launch.agentServesStore = true;
        const pid_t pid = startWorker(program, ranks.args, environmentFor(launch));
        if (pid < 0) {
            std::fprintf(stderr, "d2dpo %s: error: cannot start rank %d\n", ranks.command.c_str(), rank);
            exitCodes[rank] = 1;
            break;
        }
        running[pid] = rank;
    }
    using Clock = std::chrono::steady_clock;
    std::optional<Clock::time_point> deadline; // set once a worker failed: the others end by then
    bool signalled = false;
    if (int(running.size()) < ranks.processes) { // the group cannot form: the started ones stop now
        signalled = true;
        for (const auto& [pid, rank] : running)
            kill(pid, SIGTERM);
        deadline = Clock::now() + kGrace;
    }
    while (!running.empty()) {
        if (stop.stopRequested() && !signalled) {
            signalled = true;
            for (const auto& [pid, rank] : running)
                kill(pid, SIGTERM);
        }
        if (deadline && Clock::now() > *deadline) {
            for (const auto& [pid, rank] : running) {
                std::fprintf(stderr, "d2dpo %s: rank %d did not end after the group's timeout; killing it\n",
                             ranks.command.c_str(), rank);
                kill(pid, SIGKILL);
            }
            deadline.reset();
        }
        int status = 0;
        const pid_t done = waitpid(-1, &status, WNOHANG);
        if (done <= 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            continue;
        }
        const auto it = running.find(done);
        if (it == running.end())
            continue;
        const int rank = it->second, code = exitCodeOf(status);
        running.erase(it);
        exitCodes[rank] = code;
        if (code != 0 && !running.empty() && !deadline && !signalled && !(ranks.mainOutlivesFailures && rank != 0)) {
            std::fprintf(stderr, "d2dpo %s: rank %d ended (exit code %d); the other ranks stop within %d s\n",
                         ranks.command.c_str(), rank, code, ranks.groupTimeoutSeconds);
            deadline = Clock::now() + std::chrono::seconds(ranks.groupTimeoutSeconds) + kGrace;
        }
    }
    if (exitCodes.count(0) && exitCodes[0] != 0)
        return exitCodes[0];
    for (const auto& [rank, code] : exitCodes)
        if (code != 0)
            return code;
    return 0;
}

Result<std::optional<LaunchEnvironment>> launchOf(int nproc)
{
    auto launch = launchFromEnvironment();
    if (launch && launch.value() && nproc > 1)
        return makeError("--nproc starts its own workers: leave it out when a launcher (torchrun) sets RANK and "
                         "WORLD_SIZE");
    return launch;
}

int runAsLocalRanks(int nproc, LocalRanks ranks)
{
    ranks.processes = nproc;
    ranks.args = ownArgumentsWithout("--nproc");
    const bool threadsGiven = std::any_of(ranks.args.begin(), ranks.args.end(), [](const std::string& arg) {
        return arg == "--threads" || arg.rfind("--threads=", 0) == 0;
    });
    if (!threadsGiven) {
        ranks.args.push_back("--threads");
        ranks.args.push_back(std::to_string(std::max(1, physicalCoreCount() / nproc)));
    }
    return runLocalRanks(ranks, stopOnSignals());
}

void addLaunchOptions(CLI::App* command, int& nproc, int& groupTimeoutSeconds, const std::string& nprocHelp,
                      const std::string& groupTimeoutHelp)
{
    command->add_option("--nproc", nproc, nprocHelp)->check(CLI::Range(1, kMaxWorldSize))->capture_default_str();
    command->add_option("--group-timeout", groupTimeoutSeconds, groupTimeoutHelp)
        ->check(CLI::Range(1, 24 * 3600))
        ->capture_default_str();
}

} // namespace d2dpo::cli
