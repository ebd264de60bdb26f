// SPDX-License-Identifier: GPL-3.0-or-later
// Value-or-error for fallible operations (files, configs, checkpoints): the error carries a
// message a user can act on. Exceptions are kept for programming errors.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace d2dpo {

/// What kind of failure an error is, for callers that act on it (never match the message text).
enum class ErrorCode {
    Failed,          ///< anything without a more specific code
    AlreadyLabelled, ///< the pair has an active label already (a double press)
    NotFound,        ///< the record asked for does not exist
    ReadOnly,        ///< the file or its folder cannot be written
    Denied,          ///< the database role may not do this (a team store's grants and row security)
    Unreachable,     ///< a team store's server cannot be reached, or the connection was lost
};

struct Error {
    ErrorCode code = ErrorCode::Failed;
    std::string message;
};

template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : m_data(std::move(value)) {}
    Result(Error error) : m_data(std::move(error)) {}

    bool ok() const { return std::holds_alternative<T>(m_data); }
    explicit operator bool() const { return ok(); }

    T& value() & { return std::get<T>(m_data); }
    const T& value() const& { return std::get<T>(m_data); }
    /// By value: `for (auto& x : f().value())` must not dangle once the temporary Result dies.
    T value() && { return std::get<T>(std::move(m_data)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    const std::string& error() const { return std::get<Error>(m_data).message; }
    ErrorCode errorCode() const { return std::get<Error>(m_data).code; }

private:
    std::variant<T, Error> m_data;
};

/// Result of an operation that returns nothing on success.
struct Ok {};
using Status = Result<Ok>;

inline Error makeError(std::string message) { return Error{ErrorCode::Failed, std::move(message)}; }
inline Error makeError(ErrorCode code, std::string message) { return Error{code, std::move(message)}; }

/// Success or the error of `result`, without its value.
template <typename T>
Status statusOf(const Result<T>& result)
{
    if (result)
        return Ok{};
    return makeError(result.errorCode(), result.error());
}

} // namespace d2dpo
