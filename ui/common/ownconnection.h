// SPDX-License-Identifier: GPL-3.0-or-later
// A connection of its own to a store, for work off the window's thread (a team store's worker,
// the looks at runs and comparisons, the Labelers report): opened on first use, and again after an
// open that failed; used by one thread at a time. Shared (std::shared_ptr) with the pool tasks that
// use it, so a task still on its way when its window closes keeps it alive; giveUp() (from any
// thread) ends such a task's wait on a server that hangs at once.
#pragma once

#include <memory>
#include <string>

#include "base/waitbreaker.h"
#include "store/preferencestore.h"

namespace d2dpo::ui {

class OwnConnection {
public:
    explicit OwnConnection(std::string url)
        : m_url(std::move(url))
        , m_breaker(std::make_shared<WaitBreaker>())
    {
    }

    /// The open connection; an error (ErrorCode::Unreachable, whatever the reason) when the store
    /// cannot be opened now.
    Result<PreferenceStore*> get()
    {
        if (!m_store) {
            if (m_breaker->tripped()) // an open may wait its connect_timeout: none after giveUp()
                return makeError(ErrorCode::Unreachable, "the wait for the store was given up");
            auto opened = PreferenceStore::open(m_url, PreferenceStore::OpenMode::MustExist, m_breaker);
            if (!opened) // whatever the reason, nothing can be read or sent until it opens
                return makeError(ErrorCode::Unreachable, opened.error());
            m_store = std::move(opened.value());
        }
        return m_store.get();
    }
    /// Closes it (opened again by the next get()).
    void close() { m_store.reset(); }
    bool isOpen() const { return m_store != nullptr; }
    /// From any thread: the statement the user of this connection waits on, if any, fails now as
    /// a lost connection, and so does every later one (a window that closes; not undone).
    void giveUp() { m_breaker->trip(); }

private:
    std::string m_url;
    std::unique_ptr<PreferenceStore> m_store;
    std::shared_ptr<WaitBreaker> m_breaker; ///< made once, never replaced: giveUp() may race get()
};

} // namespace d2dpo::ui
