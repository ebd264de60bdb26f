// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/assayimport.h"

#include <cstdio>
#include <set>

#include "assays/measuredsequences.h"
#include "base/untrustedtext.h"
#include "facades/taskinfo.h"
#include "store/preferencestore.h"

namespace d2dpo {

namespace {

/// Bad lines named in one message: the first ones, then how many more.
constexpr size_t kLinesNamed = 10;

uint64_t fnv1a(const std::string& bytes, uint64_t hash, uint64_t prime)
{
    for (unsigned char c : bytes) {
        hash ^= c;
        hash *= prime;
    }
    return hash;
}

} // namespace

std::string contentDigest(const std::string& bytes)
{
    // The standard 64-bit offset basis and prime, and a second pass from another basis with the
    // 64-bit prime's neighbour: two hashes a change of bytes does not keep equal by accident.
    const uint64_t a = fnv1a(bytes, 1469598103934665603ull, 1099511628211ull);
    const uint64_t b = fnv1a(bytes, 0x84222325cbf29ce4ull, 1099511628211ull + 2);
    char out[33];
    std::snprintf(out, sizeof out, "%016llx%016llx", static_cast<unsigned long long>(a),
                  static_cast<unsigned long long>(b));
    return out;
}

Result<AssayImportResult> importAssayFile(const AssayImportSpec& spec)
{
    if (spec.direction != "higher" && spec.direction != "lower")
        return makeError("the direction is 'higher' or 'lower' (which value is better), not '" +
                         excerpt(spec.direction, 40) + "'");
    if (spec.read.assay.empty())
        return makeError("name the assay (--assay NAME): values of different assays are never compared");
    auto task = TaskInfo::fromCheckpoint(spec.checkpoint);
    if (!task)
        return makeError(task.error());
    AssayFileOptions read = spec.read;
    read.symbols = task->symbols();
    const TaskConfig& config = task->config();
    read.minLength = size_t(std::max<int64_t>(1, config.minLength));
    read.maxLength = size_t(std::max<int64_t>(1, config.length));
    auto bytes = readBoundedRegularFile(spec.file, read.maxBytes);
    if (!bytes)
        return makeError("the measurement file '" + excerpt(spec.file, 200) + "': " + bytes.error());
    auto report = parseAssayText(bytes.value(), read, spec.file);
    if (!report)
        return makeError("the measurement file '" + excerpt(spec.file, 200) + "' is refused, and nothing was stored: " +
                         report.error());
    // Each sequence as the model's task reads it (a fixed length, its begin and end, ...).
    std::vector<std::string> bad;
    size_t badCount = 0;
    std::set<std::string> distinct;
    for (const Measurement& m : report->measurements) {
        distinct.insert(m.sequence);
        if (Status s = task->check(m.sequence); !s && ++badCount <= kLinesNamed)
            bad.push_back("line " + std::to_string(m.line) + ": " + s.error());
    }
    if (badCount > 0) {
        std::string message = "the measurement file '" + excerpt(spec.file, 200) + "' holds sequences the model's task (" +
                              task->summary() + ") cannot take, and nothing was stored: ";
        for (size_t i = 0; i < bad.size(); ++i)
            message += (i ? "; " : "") + bad[i];
        if (badCount > bad.size())
            message += "; and " + std::to_string(badCount - bad.size()) + " more";
        return makeError(message);
    }
    auto store = PreferenceStore::open(spec.storePath);
    if (!store)
        return makeError(store.error());
    if (Status s = task->recordIn(*store.value()); !s)
        return makeError(s.error());
    std::vector<StoredMeasurement> values;
    values.reserve(report->measurements.size());
    for (const Measurement& m : report->measurements)
        values.push_back({m.sequence, m.value, m.sd, m.replicates, m.line, 0});
    AssayRecord assay{read.assay, spec.direction, task->key(), 0, 0, 0};
    auto stored = store.value()->importMeasurements(assay, spec.file, contentDigest(bytes.value()), values);
    if (!stored)
        return makeError(stored.error());
    return AssayImportResult{stored.value(), values.size(), distinct.size(), task->key(),
                             toString(report->format)};
}

} // namespace d2dpo
