// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/runlock.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace d2dpo {

RunLock::~RunLock() { release(); }

RunLock::RunLock(RunLock&& other) noexcept : m_fd(other.m_fd), m_path(std::move(other.m_path))
{
    other.m_fd = -1;
}

RunLock& RunLock::operator=(RunLock&& other) noexcept
{
    if (this != &other) {
        release();
        m_fd = other.m_fd;
        m_path = std::move(other.m_path);
        other.m_fd = -1;
    }
    return *this;
}

Result<RunLock> RunLock::acquire(const std::string& path)
{
    // A holder that releases unlinks the file while still holding it; a lock taken on that
    // vanishing file would prove nothing, so the locked file must still be the one at `path`.
    for (int attempt = 0; attempt < 5; ++attempt) {
        // flock locks belong to the open file description, so even a second open in this process
        // sees the lock as taken; O_CLOEXEC keeps child processes from inheriting it.
        const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
            return makeError("cannot create the run's lock file '" + path + "': " + std::strerror(errno));
        if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
            const int error = errno;
            ::close(fd);
            if (error == EWOULDBLOCK)
                return makeError("another process is running the run of '" + path + "'");
            return makeError("cannot lock '" + path + "': " + std::strerror(error));
        }
        struct stat locked {}, named {};
        if (::fstat(fd, &locked) == 0 && ::stat(path.c_str(), &named) == 0 && locked.st_dev == named.st_dev &&
            locked.st_ino == named.st_ino) {
            RunLock lock;
            lock.m_fd = fd;
            lock.m_path = path;
            return lock;
        }
        ::close(fd); // the file was replaced or removed meanwhile: try the one there now
    }
    return makeError("cannot lock '" + path + "': the file keeps being replaced");
}

void RunLock::release()
{
    if (m_fd < 0)
        return;
    ::unlink(m_path.c_str()); // while still locked: nobody can take a file about to vanish
    ::flock(m_fd, LOCK_UN);
    ::close(m_fd);
    m_fd = -1;
}

bool runLockHeld(const std::string& path)
{
    if (path.empty())
        return false;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    // A shared lock conflicts with the holder's exclusive one; when granted, nobody holds it.
    const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    ::close(fd); // closing drops the probe's own lock
    return held;
}

} // namespace d2dpo
