// SPDX-License-Identifier: GPL-3.0-or-later
// Preferences as JSON Lines in the convention DPO users know: one {"chosen": ..., "rejected": ...}
// object per line, plus our metadata (labeler, time, model ids, display order). Import checks
// every line first and then stores all of them or none, naming the first bad line.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "store/preferencestore.h"
#include "base/result.h"

namespace d2dpo {

/// What an import accepts: sequences of one task, checked by that task (facades/taskinfo.h makes
/// the rules from a model's task).
struct JsonlRules {
    std::string task;                                   ///< the task key the imported pairs get
    std::function<Status(const std::string&)> check;    ///< Ok for a sequence the task can read
};

/// Every decisive label (left/right) as JSON lines. With `withUndecided`, ties, skips and both-bad
/// labels follow as {"sequence_a", "sequence_b", "choice": "tie"|"skip"|"both-bad", ...}: the DPO
/// convention has no place for them (no chosen, no rejected), so they get a shape of their own
/// that DPO readers skip and that our import leaves out with a count.
Result<std::string> preferencesJsonl(PreferenceStore& store, int64_t& count, bool withUndecided = false);

/// Writes the lines of preferencesJsonl() to `path` (all or nothing, never over the store itself,
/// a device or a folder: base/safeoutput.h); returns how many lines.
Result<int64_t> exportPreferencesJsonl(PreferenceStore& store, const std::string& path, bool withUndecided = false);

/// Reads `path` (a regular file; lines up to 1 MB) and validates every line, and the lines together
/// (one labeler labels one pair once), without a store: a caller can refuse a bad file before it
/// creates one. The error names the line and ends "; nothing was imported".
Result<std::vector<PreferenceRecord>> readPreferencesJsonl(const std::string& path, const JsonlRules& rules);

/// Imports what readPreferencesJsonl() read from `path` in one transaction, leaving out exact
/// duplicates of stored preferences (PreferenceStore::importPreferences).
Result<ImportOutcome> importPreferenceRecords(PreferenceStore& store, const std::vector<PreferenceRecord>& records,
                                              const std::string& path);

/// readPreferencesJsonl(), then importPreferenceRecords().
Result<ImportOutcome> importPreferencesJsonl(PreferenceStore& store, const std::string& path, const JsonlRules& rules);

/// Parses one line (1-based `lineNumber` for messages) into a record.
Result<PreferenceRecord> parsePreferenceLine(const std::string& line, int64_t lineNumber, const JsonlRules& rules);
std::string toJsonLine(const PreferenceRecord& record);

} // namespace d2dpo
