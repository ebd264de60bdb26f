// SPDX-License-Identifier: GPL-3.0-or-later
// A label's choice for a shown pair: the left or right sequence, a tie (both as good), both bad
// (neither acceptable), or a skip. Only left and right carry a preference D2-DPO trains on. Shared by the
// store (which keeps labels), the tasks' rules (which make simulated labels) and the views.
#pragma once

#include <optional>
#include <string>

namespace d2dpo {

enum class Choice { Left, Right, Tie, Skip, BothBad };

inline constexpr int kChoiceCount = 5;

/// "left", "right", "tie", "skip" or "both-bad": the store's and the JSONL files' spelling.
const char* toString(Choice choice);
std::optional<Choice> choiceFromString(const std::string& text);

} // namespace d2dpo
