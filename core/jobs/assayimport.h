// SPDX-License-Identifier: GPL-3.0-or-later
// Measurements brought into a store (`d2dpo measurements import`, the desktop's Measurements
// panel): a file of assay values read and checked whole against a model's task (its symbols, its
// lengths, each sequence as the task reads it) before the store is opened, so a bad file leaves
// nothing behind, then stored as one import, once per file content. Torch-free header.
#pragma once

#include <cstdint>
#include <string>

#include "assays/assayfile.h"
#include "base/result.h"
#include "store/assaybook.h"

namespace d2dpo {

struct AssayImportSpec {
    std::string storePath;
    std::string file;
    std::string checkpoint;          ///< the model whose task the sequences must be of
    std::string direction = "higher"; ///< which value is better: "higher" or "lower"
    AssayFileOptions read;           ///< the file's layout; its assay, symbols and lengths are set from the rest
};

struct AssayImportResult {
    AssayImportOutcome stored;
    size_t rows = 0;      ///< measurements in the file
    size_t sequences = 0; ///< distinct sequences among them
    std::string task;     ///< the task's key
    std::string format;   ///< the layout read: "table", "proteingym" or "fasta"
};

Result<AssayImportResult> importAssayFile(const AssayImportSpec& spec);

/// A file's content identity: 128 bits as hex (two independent 64-bit FNV-1a passes), what makes
/// a second import of the same bytes add nothing.
std::string contentDigest(const std::string& bytes);

} // namespace d2dpo
