// SPDX-License-Identifier: GPL-3.0-or-later
// What the Label view shows beside a sequence, as its task reads it: whether it is valid, what
// it decodes to and what the rule sees in it. Plain struct: tasks/ fills it, jobs/ hands it on.
#pragma once

#include <string>

namespace d2dpo {

struct SequenceHint {
    bool valid = false;
    std::string value; ///< what it is, for people ("i = 5", "length 6"); why not, when invalid
    std::string rule;  ///< what the rule sees in it ("matches ^[aeiou]", "42% GC"); empty without a rule
};

} // namespace d2dpo
