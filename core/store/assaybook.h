// SPDX-License-Identifier: GPL-3.0-or-later
// Measurements in the store: the assays (what was measured, which way is better, the task its
// sequences belong to), each imported file once per assay (by its content's digest: importing it
// again adds nothing) and its measured values, taken out again as one import. A sequence measured
// twice keeps both values. One facet of PreferenceStore (store/preferencestore.h); on a team
// store, a maintainer's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "store/storefacet.h"

namespace d2dpo {

/// An assay: its name, "higher" or "lower" (which value is better) and its task's key.
struct AssayRecord {
    std::string name;
    std::string direction = "higher";
    std::string task;
    int64_t measurements = 0; ///< read back: its values in the store
    int64_t sequences = 0;    ///< read back: the distinct sequences among them
    int64_t imports = 0;      ///< read back: the files they came from
};

/// One stored value of one sequence.
struct StoredMeasurement {
    std::string tokens;
    double value = 0;
    std::optional<double> sd;
    int64_t replicates = 1;
    int64_t line = 0; ///< its line in the file it came from
    int64_t importId = 0;
};

struct AssayImportRecord {
    int64_t id = 0;
    std::string assay;
    std::string file;
    std::string digest;
    std::string createdAt;
    int64_t measurements = 0;
};

struct AssayImportOutcome {
    int64_t importId = 0;     ///< the new import's id, or the earlier one's when `alreadyImported`
    int64_t added = 0;
    bool alreadyImported = false;
};

class AssayBook : protected StoreFacet {
public:
    /// Stores `values` of one file as one import of `assay` (made when new), all or nothing. An
    /// assay that exists must have the same direction and task. A file whose digest this assay
    /// already holds adds nothing and says which import it was.
    Result<AssayImportOutcome> importMeasurements(const AssayRecord& assay, const std::string& file,
                                                  const std::string& digest,
                                                  const std::vector<StoredMeasurement>& values);
    Result<std::vector<AssayRecord>> assays();
    Result<std::vector<AssayImportRecord>> assayImports();
    /// Every value of `assay`, in the order stored; an error when there is no such assay.
    Result<std::vector<StoredMeasurement>> measurementsOf(const std::string& assay);
    /// Takes an import out with its values (and its assay, when it held nothing else); returns the
    /// count of values removed. With `dryRun`, only counts.
    Result<int64_t> deleteAssayImport(int64_t importId, bool dryRun);

protected:
    using StoreFacet::StoreFacet;
};

} // namespace d2dpo
