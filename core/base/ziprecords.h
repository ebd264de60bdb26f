// SPDX-License-Identifier: GPL-3.0-or-later
// The records a zip archive says it holds, read from its central directory alone: nothing is
// inflated. A TorchScript archive (and a .d2dpo checkpoint) is a zip; a record that states it
// inflates to gigabytes is a zip bomb, found here before any reader allocates for it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace d2dpo {

struct ZipRecord {
    std::string name;
    uint64_t storedBytes = 0; ///< the bytes it takes in the archive
    uint64_t inflatedBytes = 0; ///< the bytes it says it inflates to
    bool compressed = false; ///< deflated (or any method but "stored")
};

/// The central directory of `archive` (the whole file's bytes), zip64 included; an error when it
/// is not there or not whole.
Result<std::vector<ZipRecord>> readZipRecords(std::string_view archive);

/// What a model archive may hold, checked on what its records state: every record's inflated
/// size within what the archive can need (all records together at most twice the archive's own
/// size plus `slackBytes`: weights barely compress, so a much larger total is a bomb), and every
/// record but the tensors (`data/...`) at most `smallRecordBytes` (code and pickles are small).
Status checkZipBudget(std::string_view archive, uint64_t smallRecordBytes = 64ull << 20,
                      uint64_t slackBytes = 64ull << 20);

} // namespace d2dpo
