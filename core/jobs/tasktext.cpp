// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/tasktext.h"

#include "tasks/binaryintegertext.h"

namespace d2dpo {

SequenceHint sequenceHint(const std::string& tokens)
{
    // Built whole rather than member by member: GCC 12 at -O3 warns (wrongly) about assigning a
    // literal to a member string here (-Wstringop-overflow).
    const auto value = decodeBinaryInteger(tokens);
    if (!value)
        return SequenceHint{false, "i", {}, {}};
    return SequenceHint{true, "i", std::to_string(*value), *value % 2 ? "odd" : "even"};
}

std::string simulatedExpertName() { return "rule:odd"; }

Choice simulatedExpertChoice(const std::string& left, const std::string& right) { return oddRuleChoice(left, right); }

} // namespace d2dpo
