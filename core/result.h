// Value-or-error for fallible operations (files, configs, checkpoints): the error carries a
// message a user can act on. Exceptions are kept for programming errors.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace d2dpo {

struct Error {
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

private:
    std::variant<T, Error> m_data;
};

/// Result of an operation that returns nothing on success.
struct Ok {};
using Status = Result<Ok>;

inline Error makeError(std::string message) { return Error{std::move(message)}; }

} // namespace d2dpo
