// SPDX-License-Identifier: GPL-3.0-or-later
// A way for one thread to end another's wait on a socket at once. The waiting side polls fd()
// beside its socket; trip() makes fd() readable for good. Made for a window that closes while a
// worker waits on a team server that hangs: the worker hears it now, not at the answer limit
// (store/sql/postgresanswer.h), and the window does not wait for it.
#pragma once

#include <atomic>

namespace d2dpo {

class WaitBreaker {
public:
    WaitBreaker();
    ~WaitBreaker();
    WaitBreaker(const WaitBreaker&) = delete;
    WaitBreaker& operator=(const WaitBreaker&) = delete;

    /// From any thread, any number of times: every wait on fd(), now and later, ends.
    void trip() noexcept;
    bool tripped() const noexcept { return m_tripped.load(std::memory_order_acquire); }
    /// Readable once tripped; -1 when no pipe could be made (then only tripped() says it).
    int fd() const noexcept { return m_read; }

private:
    int m_read = -1;
    int m_write = -1;
    std::atomic<bool> m_tripped{false};
};

} // namespace d2dpo
