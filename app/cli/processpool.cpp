// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/processpool.h"

#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <map>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace d2dpo::cli {

namespace {

std::string selfPath()
{
    char path[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    return n > 0 ? std::string(path, size_t(n)) : std::string("d2dpo");
}

pid_t start(const std::string& program, const ChildJob& job)
{
    // Everything the child needs is made before fork(): after it, only async-signal-safe calls.
    std::vector<char*> argv{const_cast<char*>(program.c_str())};
    for (const std::string& arg : job.args)
        argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    const int log = open(job.logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const pid_t pid = fork();
    if (pid != 0) {
        if (log >= 0)
            close(log);
        return pid;
    }
    // Child: a process group of its own, so a Ctrl-C in the terminal reaches only the parent,
    // which passes one SIGTERM on (a clean stop; a second signal would end the child at once).
    setpgid(0, 0);
    if (log >= 0) {
        dup2(log, STDOUT_FILENO);
        dup2(log, STDERR_FILENO);
    }
    execv(program.c_str(), argv.data());
    static const char message[] = "d2dpo: cannot start a child process\n";
    (void)!write(STDERR_FILENO, message, sizeof message - 1);
    _exit(127);
}

} // namespace

PoolOutcome runChildren(const std::vector<ChildJob>& jobs, int parallel, const StopToken& stop)
{
    const std::string program = selfPath();
    PoolOutcome outcome;
    std::map<pid_t, const ChildJob*> running;
    size_t next = 0;
    bool signalled = false;
    while (next < jobs.size() || !running.empty()) {
        if (stop.stopRequested()) {
            outcome.stopped = true;
            if (!signalled)
                for (const auto& [pid, job] : running)
                    kill(pid, SIGTERM);
            signalled = true;
        }
        while (!outcome.stopped && next < jobs.size() && int(running.size()) < std::max(1, parallel)) {
            const ChildJob& job = jobs[next++];
            const pid_t pid = start(program, job);
            if (pid < 0) {
                outcome.failed.push_back(job.name + " (could not start a process)");
                continue;
            }
            std::printf("  started  %s\n", job.name.c_str());
            std::fflush(stdout);
            running[pid] = &job;
        }
        if (running.empty())
            break;
        int status = 0;
        const pid_t done = waitpid(-1, &status, WNOHANG);
        if (done <= 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            continue;
        }
        const auto it = running.find(done);
        if (it == running.end())
            continue;
        const ChildJob& job = *it->second;
        running.erase(it);
        const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        std::printf("  %s %s\n", ok ? "finished" : "FAILED  ", job.name.c_str());
        std::fflush(stdout);
        if (ok)
            outcome.succeeded.push_back(job.name);
        else {
            const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            outcome.failed.push_back(job.name + " (exit " + std::to_string(code) + "; see " + job.logPath + ")");
        }
    }
    return outcome;
}

} // namespace d2dpo::cli
