// SPDX-License-Identifier: GPL-3.0-or-later
// Reads a user's sequences into a task spec: FASTA ('>' headers, a sequence over several lines,
// '*' end marks stripped, upper-cased) or one sequence per line; blank lines and CRLF endings
// are fine. The vocabulary is read from the data or named (protein, dna, rna, symbols:LIST);
// a symbol outside a named vocabulary, an over-long sequence (unless cropping is asked for) and
// an empty file are refused, each error naming the line. Duplicates are kept and counted. No torch.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"
#include "base/datafile.h"

namespace d2dpo {

Result<SequenceFileTask> readSequenceFile(const std::string& path, const SequenceFileOptions& options);

} // namespace d2dpo
