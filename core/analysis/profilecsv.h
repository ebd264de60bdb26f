// SPDX-License-Identifier: GPL-3.0-or-later
// The per-position figures as CSV files a spreadsheet, R or pandas reads: one row per observation
// and a `set` column naming whose sequences they are ("training", "reference", "model"), so the
// sets of one export stack into one table.
//   positions.csv    set, position (1-based), sequences, ended, one column per symbol (its
//                    frequency among the sequences with a symbol there), entropy_bits,
//                    information_bits
//   composition.csv  symbol, then one column per set: the symbol's share over all positions
//   nearest.csv      set, sample (1-based), sequence, identity, nearest (1-based index into the
//                    training sequences, empty without data), nearest_sequence
// Numbers are written with 6 decimals; a symbol that is a comma or a quote is quoted (RFC 4180).
#pragma once

#include <string>
#include <vector>

#include "analysis/nearestidentity.h"
#include "analysis/positionprofile.h"
#include "base/result.h"

namespace d2dpo {

/// One set of sequences with its figures: a model's samples, its reference's, the training data.
struct ProfiledSet {
    std::string name;                   ///< the `set` column: "model", "reference", "training"
    std::vector<std::string> sequences; ///< as profiled (the task's text)
    PositionProfile profile;
    NearestIdentity nearest; ///< empty for the training data itself
};

/// Profiles `sequences` and, when `training` is given, finds each one's nearest training sequence.
ProfiledSet profileSet(std::string name, std::vector<std::string> sequences, const std::string& symbols,
                       const std::vector<std::string>& training, int64_t length = 0);

std::string positionsCsv(const std::vector<const ProfiledSet*>& sets);
/// Every set must have been profiled over the same symbols.
std::string compositionCsv(const std::vector<const ProfiledSet*>& sets);
/// Sets without nearest-training figures (the training data) are left out.
std::string nearestCsv(const std::vector<const ProfiledSet*>& sets, const std::vector<std::string>& training);

/// Writes positions.csv, composition.csv and nearest.csv into `folder` (which must exist), each
/// file all or nothing (base/safeoutput.h). Returns the first error.
Status writeProfileCsvs(const std::string& folder, const std::vector<const ProfiledSet*>& sets,
                        const std::vector<std::string>& training);

} // namespace d2dpo
