// SPDX-License-Identifier: GPL-3.0-or-later
// Substitutions as deep mutational scans write them (ProteinGym's `mutant` column): "A23G" is the
// wild type's A at position 23 (1-based) replaced by G, "A23G:L45P" two of them, and "", "WT",
// "wt" or "_wt" the wild type itself. Checked against the wild type, or against the mutated
// sequence when no wild type is given, so that a file whose columns disagree is never read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace d2dpo {

/// One substitution: the symbol `from` at `position` (1-based) becomes `to`.
struct Substitution {
    char from = 0;
    int64_t position = 0;
    char to = 0;
};

/// Whether `mutant` names the wild type itself ("", "WT", "wt", "_wt").
bool isWildTypeMutant(const std::string& mutant);

/// The substitutions of "A23G:L45P" (none for the wild type), or why it is not written so.
Result<std::vector<Substitution>> parseMutant(const std::string& mutant);

/// `wildType` with the substitutions of `mutant` applied, or why they disagree with it (a
/// position outside it, or another symbol there than the mutant says).
Result<std::string> applyMutant(const std::string& mutant, const std::string& wildType);

/// Whether `mutatedSequence` holds each substitution's new symbol at its position: the check
/// left when no wild type is given.
Status checkMutantAgainstMutated(const std::string& mutant, const std::string& mutatedSequence);

} // namespace d2dpo
