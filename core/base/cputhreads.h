// SPDX-License-Identifier: GPL-3.0-or-later
// How many CPU threads the engine uses by default, and how they wait. The default is every
// physical core this process may run on (SMT siblings share a core's arithmetic units, and the
// small steps here do not gain from them). Idle OpenMP threads sleep rather than spin
// (OMP_WAIT_POLICY=PASSIVE), since spinning threads steal the core from any other busy process,
// the GUI thread included; libgomp reads that variable once, when it is loaded, so a program sets
// it by re-executing itself before anything else runs.
#pragma once

namespace d2dpo {

/// Physical cores in this process's CPU affinity mask (at least 1).
int physicalCoreCount();

/// Call first thing in main(): unless OMP_WAIT_POLICY is already set (by the user, or by this
/// call in the re-executed process), sets it to PASSIVE and re-executes the program with the
/// same arguments. Returns only when no re-execution happened (or it failed, harmlessly).
void preferPassiveOpenMpWait(char** argv);

} // namespace d2dpo
