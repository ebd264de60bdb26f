// SPDX-License-Identifier: GPL-3.0-or-later
// A connection of its own to a store, for work off the window's thread (a team store's worker,
// the looks at runs and comparisons, the Labelers report): opened on first use, and again after an
// open that failed; used by one thread at a time. Shared (std::shared_ptr) with the pool tasks that
// use it, so a task still on its way when its window closes keeps it alive.
#pragma once

#include <memory>
#include <string>

#include "store/preferencestore.h"

namespace d2dpo::ui {

class OwnConnection {
public:
    explicit OwnConnection(std::string url) : m_url(std::move(url)) {}

    /// The open connection; an error (ErrorCode::Unreachable, whatever the reason) when the store
    /// cannot be opened now.
    Result<PreferenceStore*> get()
    {
        if (!m_store) {
            auto opened = PreferenceStore::open(m_url, PreferenceStore::OpenMode::MustExist);
            if (!opened) // whatever the reason, nothing can be read or sent until it opens
                return makeError(ErrorCode::Unreachable, opened.error());
            m_store = std::move(opened.value());
        }
        return m_store.get();
    }
    /// Closes it (opened again by the next get()).
    void close() { m_store.reset(); }
    bool isOpen() const { return m_store != nullptr; }

private:
    std::string m_url;
    std::unique_ptr<PreferenceStore> m_store;
};

} // namespace d2dpo::ui
