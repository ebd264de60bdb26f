// SPDX-License-Identifier: GPL-3.0-or-later
#include "model/modelwarnings.h"

#include <atomic>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_set>

#include <c10/util/Exception.h>

#include "base/untrustedtext.h"

namespace d2dpo {

namespace {

std::atomic<int64_t> g_raised{0};

class BoundedWarnings final : public c10::WarningHandler {
public:
    void process(const c10::SourceLocation&, const std::string& message, const bool) override
    {
        g_raised.fetch_add(1, std::memory_order_relaxed);
        const size_t key = std::hash<std::string>()(message);
        std::lock_guard lock(m_mutex);
        if (!m_seen.insert(key).second)
            return; // said already: a warning on every pass is said once
        if (int(m_seen.size()) > kShownModelWarnings) {
            if (!m_saidMore)
                std::fprintf(stderr, "Warning: more warnings follow; they are not shown (%d were)\n",
                             kShownModelWarnings);
            m_saidMore = true;
            return;
        }
        const std::string shown = excerpt(message, kWarningExcerptBytes);
        std::fprintf(stderr, "Warning: %s%s\n", shown.c_str(),
                     message.size() > size_t(kWarningExcerptBytes) ? " (cut; said once)" : "");
    }

private:
    std::mutex m_mutex;
    std::unordered_set<size_t> m_seen;
    bool m_saidMore = false;
};

} // namespace

void useModelWarningFilter()
{
    static BoundedWarnings filter; // one for the process: a warning said on one thread is said
    thread_local bool installed = false;
    if (!installed) {
        c10::Warning::set_warning_handler(&filter);
        installed = true;
    }
}

int64_t modelWarningsRaised() { return g_raised.load(std::memory_order_relaxed); }

} // namespace d2dpo
