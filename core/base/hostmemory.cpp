// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/hostmemory.h"

#include <climits>
#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace d2dpo {

namespace {
bool g_kept = false;
} // namespace

bool freedHostMemoryKept() { return g_kept; }

bool keepFreedHostMemory()
{
    if (const char* setting = std::getenv("D2DPO_KEEP_FREED_MEMORY"); setting && std::strcmp(setting, "0") == 0)
        return false;
#if defined(__GLIBC__)
    // Every block comes from the heap, and the heap is never trimmed below 2 GiB of free top.
    g_kept = mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1;
    return g_kept;
#else
    return false;
#endif
}

} // namespace d2dpo
