// SPDX-License-Identifier: GPL-3.0-or-later
// Preferences brought in from files, the record of each import, and taking labels out again (an
// import's, a model's, a labeler's). One facet of PreferenceStore (store/preferencestore.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "store/records.h"
#include "store/storefacet.h"

namespace d2dpo {

class ImportLog : protected StoreFacet {
public:
    /// Runs a multi-statement import: all or nothing. Used by the JSONL importer. A record equal
    /// to a stored decisive label (same task, chosen, rejected and labeler) or to an earlier
    /// record is left out and counted; nothing at all is recorded when every record is one.
    Result<ImportOutcome> importPreferences(const std::vector<PreferenceRecord>& records, const std::string& file);
    Result<std::vector<ImportRecord>> imports();
    /// Deletes the selected labels (history included) in one transaction, and the pairs of an
    /// import or model with their sequences; with `dryRun`, only counts them.
    Result<DeletedLabels> deleteLabels(const LabelSelection& selection, bool dryRun);

protected:
    using StoreFacet::StoreFacet;
};

} // namespace d2dpo
