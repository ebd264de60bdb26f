// SPDX-License-Identifier: GPL-3.0-or-later
// The records of a delimited table (CSV or TSV) as RFC 4180 writes them: quoted fields that hold
// the delimiter, doubled quotes or line breaks, and CRLF or LF line ends. Each record keeps the
// line it starts on, so that a bad row is named by the line a user sees in an editor.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace d2dpo {

/// One record (a row) of a delimited table.
struct CsvRecord {
    int64_t line = 0;                ///< 1-based line of the file the record starts on
    std::vector<std::string> fields; ///< unquoted, untrimmed
};

/// The records of `text`, blank lines skipped, or an error for a quoted field never closed. A
/// quote opens a quoted field only at the field's start; elsewhere it is an ordinary character.
Result<std::vector<CsvRecord>> splitCsvRecords(std::string_view text, char delimiter);

/// The delimiter a table's header line announces: a tab when it holds one, else a comma.
char csvDelimiterOf(std::string_view headerLine);

} // namespace d2dpo
