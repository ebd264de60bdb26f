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

enum class AssayFileFormat {
    Auto,       ///< ".fasta", ".fa", ".faa": FASTA; a header with mutant and DMS_score: ProteinGym; else a table
    Table,      ///< CSV or TSV with a header (a tab in the header line: TSV)
    ProteinGym, ///< ProteinGym's DMS substitutions layout
    Fasta,      ///< ">name value=1.25" (or "value:1.25", or a last "|1.25" field), then the sequence
};

struct AssayFileOptions {
    AssayFileFormat format = AssayFileFormat::Auto;
    std::string assay;                      ///< the assay every row belongs to (required)
    std::string sequenceColumn = "sequence"; ///< Table
    std::string valueColumn = "value";       ///< Table
    std::string sdColumn;                   ///< Table, optional: the values' standard deviations
    std::string replicatesColumn;           ///< Table, optional: replicates per value
    std::string wildType;                   ///< ProteinGym: the sequence mutants are written against
    std::string symbols;                    ///< allowed symbols; empty: printable ASCII but space
    size_t minLength = 1, maxLength = 512;
    uint64_t maxBytes = uint64_t(256) << 20; ///< a larger file is refused unread
    std::string fastaValueKey = "value";
};

struct AssayFileReport {
    std::vector<Measurement> measurements;
    size_t lines = 0;
    AssayFileFormat format = AssayFileFormat::Table; ///< the layout read
};

/// Reads a regular file of at most options.maxBytes.
Result<AssayFileReport> readAssayFile(const std::string& path, const AssayFileOptions& options);

/// The same from memory; `path` only decides an Auto format by its extension.
Result<AssayFileReport> parseAssayText(std::string_view text, const AssayFileOptions& options,
                                       const std::string& path = "");

} // namespace d2dpo
