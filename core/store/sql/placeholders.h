// SPDX-License-Identifier: GPL-3.0-or-later
// The store writes its parameters as SQLite does (`?`, `?N`); PostgreSQL numbers them `$N`.
#pragma once

#include <string>

namespace d2dpo::sql {

/// `sql` with each `?N` written `$N` and each bare `?` numbered after the largest index so far (as
/// SQLite numbers it); quoted strings, quoted names and comments are left as they are.
/// `*count`, when given, receives the largest index: how many parameters the statement takes.
std::string numberedPlaceholders(const std::string& sql, int* count = nullptr);

} // namespace d2dpo::sql
