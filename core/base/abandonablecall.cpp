// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/abandonablecall.h"

#include <atomic>

namespace d2dpo {

namespace {
std::atomic<int> g_abandoned{0};
}

int abandonedCalls() { return g_abandoned.load(); }

void countAbandonedCall() { g_abandoned.fetch_add(1); }

} // namespace d2dpo
