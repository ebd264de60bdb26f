// SPDX-License-Identifier: GPL-3.0-or-later
// Host memory between training steps. glibc's malloc hands large freed blocks back to the
// kernel (blocks over its mmap threshold are unmapped; the heap top is trimmed), so every
// step maps fresh pages that the kernel must clear again: about a quarter of a small D2-DPO
// step on the 2-core machine. Keeping freed memory in the process lets the next step reuse the
// same pages. The cost: the resident size stays at the run's peak until the process ends.
#pragma once

namespace d2dpo {

/// Makes malloc keep freed memory for reuse (no mmap for large blocks, no heap trimming).
/// D2DPO_KEEP_FREED_MEMORY=0 in the environment turns it off. Returns whether it is on.
bool keepFreedHostMemory();
/// Whether keepFreedHostMemory() took effect (printed with the runtime).
bool freedHostMemoryKept();

} // namespace d2dpo
