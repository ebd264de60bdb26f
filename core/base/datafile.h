// SPDX-License-Identifier: GPL-3.0-or-later
// What reading a user's sequence file takes and gives (the reader is tasks/sequencefile.h; the
// CLI and the views reach it through facades/taskinfo.h). Plain structs, no torch.
#pragma once

#include <cstdint>
#include <string>

#include "base/taskconfig.h"

namespace d2dpo {

struct SequenceFileOptions {
    std::string vocabulary = "data";  ///< "data", "protein", "dna", "rna" or "symbols:LIST"
    int maxLength = 0;                ///< longer sequences are refused (or cropped); 0 = the format's limit
    bool crop = false;                ///< crop longer sequences to maxLength instead of refusing them
    std::string validity = "symbols"; ///< "symbols" or "in-data"
    std::string rule;                 ///< the rule the task's metrics measure; "" for none
};

struct SequenceFileReport {
    std::string format;     ///< "fasta" or "lines"
    int64_t sequences = 0;
    int64_t distinct = 0;
    int64_t duplicates = 0; ///< sequences - distinct
    int64_t cropped = 0;
    int minLength = 0;
    int maxLength = 0;
    std::string symbols;

    std::string summary() const; ///< one line for people
};

struct SequenceFileTask {
    TaskConfig task;
    SequenceFileReport report;
};

} // namespace d2dpo
