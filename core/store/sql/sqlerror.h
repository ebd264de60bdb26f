// SPDX-License-Identifier: GPL-3.0-or-later
// What went wrong in a database, the same on every engine: the store turns each kind into the
// message and error code a user sees (a busy database is tried again, a refused permission names
// the role, a lost connection keeps what was chosen for later).
#pragma once

#include <stdexcept>
#include <string>

namespace d2dpo::sql {

enum class ErrorKind {
    Other,
    Busy,        ///< locked by another writer, a deadlock or a serialization failure: try again
    ReadOnly,    ///< the database (file or server) cannot be written
    NotADatabase,
    Constraint,  ///< a unique, foreign-key or check constraint refused the row
    Permission,  ///< the role may not do this (grants, row-level security)
    Connection,  ///< the server cannot be reached, or the connection was lost
};

class Error : public std::runtime_error {
public:
    Error(ErrorKind kind, const std::string& message, std::string code = {})
        : std::runtime_error(message), m_kind(kind), m_code(std::move(code))
    {
    }
    ErrorKind kind() const { return m_kind; }
    /// The engine's own code: SQLite's extended result code as a number, PostgreSQL's SQLSTATE.
    const std::string& code() const { return m_code; }

private:
    ErrorKind m_kind;
    std::string m_code;
};

} // namespace d2dpo::sql
