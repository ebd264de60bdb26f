// SPDX-License-Identifier: GPL-3.0-or-later
// The store's private parts, shared by the files that implement PreferenceStore (open and
// integrity in preferencestore.cpp; models, labels and runs in their own files): the SQLite
// handle with its error guard, and the small column helpers. Not for use outside store/.
#pragma once

#include <string>

#include <SQLiteCpp/SQLiteCpp.h>

#include "store/preferencestore.h"

namespace d2dpo {

inline std::string nullableText(const SQLite::Column& column)
{
    return column.isNull() ? std::string() : column.getString();
}

inline void bindOptionalText(SQLite::Statement& statement, int index, const std::string& text)
{
    if (text.empty())
        statement.bind(index); // NULL
    else
        statement.bind(index, text);
}

struct PreferenceStore::Impl {
    std::string path;
    SQLite::Database db;
    int version = 0;

    Impl(std::string p, int flags) : path(std::move(p)), db(path, flags) {}

    /// Runs `body` and turns SQLite's exceptions into a user-facing error.
    template <typename T, typename F>
    Result<T> guard(const std::string& what, F&& body)
    {
        try {
            return body();
        } catch (const SQLite::Exception& e) {
            return makeError(what + " failed in '" + path + "': " + e.what());
        }
    }
};

} // namespace d2dpo
