// SPDX-License-Identifier: GPL-3.0-or-later
#include "tasks/binaryintegertext.h"

namespace d2dpo {

std::optional<int> decodeBinaryInteger(const std::string& tokens)
{
    size_t ones = 0;
    while (ones < tokens.size() && tokens[ones] == '1')
        ++ones;
    for (size_t i = ones; i < tokens.size(); ++i)
        if (tokens[i] != '0')
            return std::nullopt;
    return int(ones);
}

int oddRuleRank(const std::string& tokens)
{
    const auto value = decodeBinaryInteger(tokens);
    if (!value)
        return 0;
    return *value % 2 == 1 ? 2 : 1;
}

Choice oddRuleChoice(const std::string& left, const std::string& right)
{
    const int l = oddRuleRank(left);
    const int r = oddRuleRank(right);
    return l > r ? Choice::Left : (r > l ? Choice::Right : Choice::Tie);
}

} // namespace d2dpo
