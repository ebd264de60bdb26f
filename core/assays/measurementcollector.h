// SPDX-License-Identifier: GPL-3.0-or-later
// What every layout of a measurement file shares (assays/assayfile.h): the checks of a row's
// sequence (empty, symbols, length) and the all-or-nothing verdict, one message naming the first
// ten bad lines with their reasons and counting the rest. Internal to the assays layer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "assays/assayfile.h"

namespace d2dpo {

/// Collects one file's measurements and the reasons its bad lines are bad.
class MeasurementCollector final {
public:
    /// Bad lines named in one message: the first ones, then how many more.
    static constexpr size_t kLinesNamed = 10;

    explicit MeasurementCollector(const AssayFileOptions& options) : m_options(options) {}

    /// Names `line` as bad for `why` (a sentence without the line number).
    void bad(int64_t line, const std::string& why);

    /// Keeps `m` (its assay set to the options') when its sequence passes the checks, else names
    /// its line as bad.
    void keep(Measurement m);

    /// The measurements, or every bad line in one message; `emptyWhy` when there was no row at all.
    Result<std::vector<Measurement>> finish(const std::string& emptyWhy);

    const AssayFileOptions& options() const { return m_options; }

private:
    const AssayFileOptions& m_options;
    std::vector<Measurement> m_kept;
    std::vector<std::string> m_bad;
    size_t m_badCount = 0;
};

} // namespace d2dpo
