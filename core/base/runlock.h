// SPDX-License-Identifier: GPL-3.0-or-later
// Proof that a run is alive, kept by the operating system: the process running it holds an
// exclusive advisory lock (flock) on a per-run file for as long as it lives. The kernel drops the
// lock when the process ends in any way (kill -9 and power loss included), so a store opened later
// can tell a dead run from a live one in another process without time-outs and without ever
// marking a live run as dead.
#pragma once

#include <string>

#include "base/result.h"

namespace d2dpo {

class RunLock {
public:
    RunLock() = default;
    ~RunLock();
    RunLock(RunLock&& other) noexcept;
    RunLock& operator=(RunLock&& other) noexcept;
    RunLock(const RunLock&) = delete;
    RunLock& operator=(const RunLock&) = delete;

    /// Creates (or reuses) the file at `path` and locks it; fails when another holder has it.
    static Result<RunLock> acquire(const std::string& path);

    const std::string& path() const { return m_path; }
    bool held() const { return m_fd >= 0; }
    /// Unlocks and removes the file.
    void release();

private:
    int m_fd = -1;
    std::string m_path;
};

/// Whether some process (this one included) holds the lock on `path`. A missing file, or one
/// that cannot be opened, means no run holds it.
bool runLockHeld(const std::string& path);

} // namespace d2dpo
