// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/cputhreads.h"

#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <algorithm>
#include <chrono>
#include <utility>

#include <sched.h>

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

namespace {

/// Jiffies (busy, total) summed over every CPU, from the first line of /proc/stat.
std::pair<long long, long long> cpuJiffies()
{
    std::ifstream in("/proc/stat");
    std::string cpu;
    long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    if (!(in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) || cpu != "cpu")
        return {0, 0};
    const long long busy = user + nice + system + irq + softirq + steal;
    return {busy, busy + idle + iowait};
}

} // namespace

int busyCoreCount()
{
    const auto [busy0, total0] = cpuJiffies();
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    const auto [busy1, total1] = cpuJiffies();
    const long long total = total1 - total0;
    if (total <= 0)
        return 0;
    const double cpus = std::max(1u, std::thread::hardware_concurrency());
    return int(double(busy1 - busy0) / double(total) * cpus + 0.5);
}

int defaultThreadCount(int reserved)
{
    return std::max(1, physicalCoreCount() - busyCoreCount() - std::max(0, reserved));
}

} // namespace d2dpo
