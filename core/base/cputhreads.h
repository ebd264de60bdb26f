// SPDX-License-Identifier: GPL-3.0-or-later
// How many CPU threads the engine uses by default: the physical cores this process may run on
// (SMT siblings share a core's arithmetic units; these small steps gain nothing from them), less
// the cores other processes are keeping busy right now (sampled for 150 ms at the start).
// Measured on a 2-core machine (small D2-DPO step): 2 threads run 1.57x faster than 1 when the
// machine is otherwise idle, but 3x slower than 1 when one other process keeps a core busy
// (OpenMP's threads wait for each other at every parallel region, and one of them keeps losing
// its core). OMP_WAIT_POLICY=PASSIVE does not rescue that: sleeping threads wake too late for
// these short regions, so 2 passive threads are no faster than 1 even on an idle machine. Hence
// the count, not the wait policy, adapts.
#pragma once

namespace d2dpo {

/// Physical cores in this process's CPU affinity mask (at least 1).
int physicalCoreCount();

/// Cores other processes keep busy right now: the machine's CPU time over the next 150 ms, from
/// /proc/stat, in cores, rounded (0 when unknown). This thread sleeps meanwhile.
int busyCoreCount();

/// physicalCoreCount() less busyCoreCount() and less `reserved` (a core kept free, e.g. for a
/// GUI thread), at least 1.
int defaultThreadCount(int reserved = 0);

} // namespace d2dpo
