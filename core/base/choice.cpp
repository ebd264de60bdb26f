// SPDX-License-Identifier: GPL-3.0-or-later
#include "base/choice.h"

namespace d2dpo {

const char* toString(Choice choice)
{
    switch (choice) {
    case Choice::Left:
        return "left";
    case Choice::Right:
        return "right";
    case Choice::Tie:
        return "tie";
    case Choice::Skip:
        return "skip";
    case Choice::BothBad:
        return "both-bad";
    }
    return "skip";
}

std::optional<Choice> choiceFromString(const std::string& text)
{
    for (Choice c : {Choice::Left, Choice::Right, Choice::Tie, Choice::Skip, Choice::BothBad})
        if (text == toString(c))
            return c;
    return std::nullopt;
}

} // namespace d2dpo
