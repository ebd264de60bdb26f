// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/waitbreaker.h"

#include <fcntl.h>
#include <unistd.h>

namespace d2dpo {

WaitBreaker::WaitBreaker()
{
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC | O_NONBLOCK) == 0) {
        m_read = ends[0];
        m_write = ends[1];
    }
}

WaitBreaker::~WaitBreaker()
{
    if (m_read >= 0)
        ::close(m_read);
    if (m_write >= 0)
        ::close(m_write);
}

void WaitBreaker::trip() noexcept
{
    if (m_tripped.exchange(true, std::memory_order_acq_rel) || m_write < 0)
        return;
    const char byte = 1; // never read: the pipe stays readable
    [[maybe_unused]] const ssize_t written = ::write(m_write, &byte, 1);
}

} // namespace d2dpo
