// SPDX-License-Identifier: GPL-3.0-or-later
// Sends a team labeler's outbox (labeling/labeloutbox.h) to the store, oldest entry first, on
// whichever thread holds that store's connection. A label whose first commit went through while
// its answer was lost counts as written, never twice; one the store refuses for good (the pair is
// gone or has its labels by now, or the role may not) is given up with the reason; on any other
// failure (the server out of reach, a deadlock, a cancelled statement, a full disk there)
// everything stays kept, in order, for the next try.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "labeling/labeloutbox.h"
#include "store/preferencestore.h"

namespace d2dpo {

struct OutboxReport {
    std::vector<std::pair<int64_t, int64_t>> written; ///< (label seq, the store's label id)
    int undone = 0;                                   ///< undo entries carried out
    std::vector<std::pair<int64_t, std::string>> refused; ///< (seq, the store's reason)
    bool unreachable = false; ///< stopped: the server is out of reach or failed (the rest stay kept)
    std::string error;        ///< then why
    bool reached = false;     ///< the server answered at least once
    size_t pending = 0;       ///< entries still kept after this try
};

/// Sends every pending entry of `outbox` to `store` as `labeler`, until none is left or the store
/// cannot take the next one now.
OutboxReport sendOutbox(LabelOutbox& outbox, PreferenceStore& store, const std::string& labeler);

} // namespace d2dpo
