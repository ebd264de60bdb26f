// SPDX-License-Identifier: GPL-3.0-or-later
// Reading a file of measured values, all or nothing: a CSV or TSV table with a header (columns
// chosen by name), ProteinGym's DMS layout as published (`mutant`, `mutated_sequence`,
// `DMS_score`; mutants such as A23G:L45P checked against a wild type), or FASTA whose headers
// carry the value. Every bad line is named with its number and reason, and one bad line refuses
// the whole file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "assays/measurement.h"
#include "base/result.h"

namespace d2dpo {

/// The layout of a measurement file.
enum class AssayFileFormat {
    Auto,       ///< .fasta/.fa/.faa/.fas or a leading '>': FASTA; columns mutant and DMS_score: ProteinGym; else Table
    Table,      ///< CSV or TSV with a header (a tab in the header line: TSV); RFC 4180 quoting, CRLF or LF
    ProteinGym, ///< ProteinGym's DMS substitutions layout
    Fasta,      ///< ">name value=1.25" (or "value:1.25", or a last "|1.25" field), then the sequence
};

/// How to read a measurement file, and what its sequences must be (the model's symbols and lengths).
/// "auto", "table", "proteingym" or "fasta": how the CLI and the desktop name a layout.
const char* toString(AssayFileFormat format);
/// The layout of that name, or why there is none.
Result<AssayFileFormat> assayFileFormatNamed(const std::string& name);

struct AssayFileOptions {
    AssayFileFormat format = AssayFileFormat::Auto;
    std::string assay;                       ///< the assay every row belongs to (required)
    std::string sequenceColumn = "sequence"; ///< Table
    std::string valueColumn = "value";       ///< Table
    std::string sdColumn;                    ///< Table, "" for none: standard deviations (an empty cell: none)
    std::string replicatesColumn;            ///< Table, "" for none: replicates per value (an empty cell: 1)
    /// ProteinGym: the sequence the mutants (1-based) are written against. Without it the mutants
    /// are checked against mutated_sequence, which must then be there.
    std::string wildType;
    std::string symbols;                     ///< allowed symbols, one char each; empty: printable ASCII but space
    size_t minLength = 1, maxLength = 512;
    uint64_t maxBytes = uint64_t(256) << 20; ///< a larger file is refused unread
    std::string fastaValueKey = "value";     ///< Fasta: ">id value=1.25", ">id value:1.25" or a last "|1.25"
};

/// What a file held: every row's measurement (duplicates kept, in file order) and its line count.
struct AssayFileReport {
    std::vector<Measurement> measurements;
    size_t lines = 0;                                ///< lines of the file
    AssayFileFormat format = AssayFileFormat::Table; ///< the layout read
};

/// Reads a regular file of at most options.maxBytes (its size checked before a byte is read; a
/// folder, a device or a pipe is never read), all or nothing. Messages do not name the file: the
/// caller, who knows what it calls it, does.
Result<AssayFileReport> readAssayFile(const std::string& path, const AssayFileOptions& options);

/// The same from memory (tests, and callers that keep the bytes to digest them); `path` only
/// decides an Auto format by its extension. A leading UTF-8 byte-order mark is skipped.
Result<AssayFileReport> parseAssayText(std::string_view text, const AssayFileOptions& options,
                                       const std::string& path = "");

} // namespace d2dpo
