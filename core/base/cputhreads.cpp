// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/cputhreads.h"

#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include <sched.h>
#include <unistd.h>

namespace d2dpo {

namespace {

/// The first integer in a sysfs file, or -1.
int readNumber(const std::string& path)
{
    std::ifstream in(path);
    int value = -1;
    in >> value;
    return in ? value : -1;
}

} // namespace

int physicalCoreCount()
{
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof mask, &mask) != 0)
        return std::max(1u, std::thread::hardware_concurrency());
    std::set<std::pair<int, int>> cores; // (package, core) of each CPU we may run on
    int cpus = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (!CPU_ISSET(cpu, &mask))
            continue;
        ++cpus;
        const std::string topology = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
        const int package = readNumber(topology + "physical_package_id");
        const int core = readNumber(topology + "core_id");
        if (core < 0)
            cores.insert({-1, cpu}); // no topology (a container may hide it): count the CPU itself
        else
            cores.insert({package, core});
    }
    return std::max(1, std::min(cpus, int(cores.size())));
}

void preferPassiveOpenMpWait(char** argv)
{
    if (getenv("OMP_WAIT_POLICY") != nullptr)
        return;
    if (setenv("OMP_WAIT_POLICY", "PASSIVE", 1) != 0)
        return;
    execv("/proc/self/exe", argv); // returns only on failure: go on with spinning threads
}

} // namespace d2dpo
