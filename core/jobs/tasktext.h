// SPDX-License-Identifier: GPL-3.0-or-later
// What the views and the CLI know of the task from a sequence's text, without tensors: the hint
// shown beside a sequence and the rule a simulated expert labels pairs with. Today the one task
// is the paper's (binary integers, the odd rule); the text functions live in tasks/.
#pragma once

#include <string>

#include "base/choice.h"

namespace d2dpo {

struct SequenceHint {
    bool valid = false;
    std::string valueName; ///< what the value is called ("i")
    std::string value;     ///< the decoded value ("5"); empty when invalid
    std::string detail;    ///< what the rule sees in it ("odd")
};

/// The hint for one sequence in the task's token text.
SequenceHint sequenceHint(const std::string& tokens);

/// The labeler name under which the simulated expert's labels are stored ("rule:odd").
std::string simulatedExpertName();

/// The simulated expert's label for a pair as shown (the task's rule; equal ranks tie).
Choice simulatedExpertChoice(const std::string& left, const std::string& right);

} // namespace d2dpo
