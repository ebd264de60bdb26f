// SPDX-License-Identifier: GPL-3.0-or-later
// The binary-integers task on token text ("1110000"), without tensors: what the labeling window
// needs for its hints (decoded value, valid or not) and for the simulated expert's odd rule.
// Agrees with BinaryIntegersTask's tensor versions (tested).
#pragma once

#include <optional>
#include <string>

#include "base/choice.h"

namespace d2dpo {

/// The integer i a sequence encodes (i ones, then zeros), or nothing when it is invalid.
std::optional<int> decodeBinaryInteger(const std::string& tokens);

/// Rank under the odd rule: valid odd 2, valid even 1, invalid 0.
int oddRuleRank(const std::string& tokens);

/// The odd rule's label for a pair as shown: the higher rank wins; equal ranks are a tie.
Choice oddRuleChoice(const std::string& left, const std::string& right);

} // namespace d2dpo
