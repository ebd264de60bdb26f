// SPDX-License-Identifier: GPL-3.0-or-later
// Who a session labels as: one rule for the desktop and `d2dpo label`.
#pragma once

#include <string>

#include "base/result.h"

namespace d2dpo {

class PreferenceStore;

/// On a team store, the database role the store connected as (the server records that role with
/// each label whatever name is asked for): a different `given` name is refused with a sentence.
/// Elsewhere `given`, else `remembered`, trimmed; "" when both are empty (the caller asks, or
/// uses its own default such as the rule's name).
Result<std::string> resolveLabeler(const PreferenceStore& store, const std::string& given,
                                   const std::string& remembered = "");

} // namespace d2dpo
