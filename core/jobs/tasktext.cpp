// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/tasktext.h"

#include "tasks/binaryintegertext.h"

namespace d2dpo {

SequenceHint sequenceHint(const std::string& tokens)
{
    SequenceHint hint;
    hint.valueName = "i";
    if (const auto value = decodeBinaryInteger(tokens)) {
        hint.valid = true;
        hint.value = std::to_string(*value);
        hint.detail = *value % 2 ? "odd" : "even";
    }
    return hint;
}

std::string simulatedExpertName() { return "rule:odd"; }

Choice simulatedExpertChoice(const std::string& left, const std::string& right) { return oddRuleChoice(left, right); }

} // namespace d2dpo
