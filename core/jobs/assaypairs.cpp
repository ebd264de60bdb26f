// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/assaypairs.h"

#include "base/untrustedtext.h"

namespace d2dpo {

Result<PairStrategy> pairStrategyNamed(const std::string& name)
{
    if (name == "margin")
        return PairStrategy::Margin;
    if (name == "clusters")
        return PairStrategy::UnionMaskClusters;
    if (name == "best")
        return PairStrategy::BestAgainstRest;
    return makeError("the pair strategy is margin (random pairs whose values differ by more than the noise), "
                     "clusters (g-DPO: pairs inside groups of sequences that differ at few positions) or best "
                     "(the best against the rest), not '" + excerpt(name, 40) + "'");
}

Result<AssayPairsResult> assayPairs(AssayBook& store, const AssayPairsSpec& spec)
{
    auto strategy = pairStrategyNamed(spec.strategy);
    if (!strategy)
        return makeError(strategy.error());
    if (spec.budget < 1)
        return makeError("the pair budget must be at least 1");
    auto assays = store.assays();
    if (!assays)
        return makeError(assays.error());
    AssayPairsResult out;
    bool found = false;
    for (const AssayRecord& a : assays.value())
        if (a.name == spec.assay) {
            out.assay = a;
            found = true;
        }
    if (!found)
        return makeError(ErrorCode::NotFound, "the store holds no assay named '" + excerpt(spec.assay, 80) +
                                                  "' (`d2dpo measurements list` shows them)");
    auto values = store.measurementsOf(spec.assay);
    if (!values)
        return makeError(values.error());
    std::vector<Measurement> measurements;
    measurements.reserve(values->size());
    for (const StoredMeasurement& v : values.value()) {
        Measurement m;
        m.sequence = v.tokens;
        m.assay = spec.assay;
        m.value = v.value;
        m.sd = v.sd;
        m.replicates = int(v.replicates);
        m.line = v.line;
        measurements.push_back(std::move(m));
    }
    out.sequences = summariseMeasurements(measurements);
    MeasuredPairOptions options;
    options.strategy = strategy.value();
    options.direction = out.assay.direction == "lower" ? AssayDirection::LowerIsBetter : AssayDirection::HigherIsBetter;
    options.k = spec.k;
    options.fixedMargin = spec.margin;
    options.budget = size_t(spec.budget);
    options.seed = spec.seed;
    options.bestShare = spec.bestShare;
    auto pairs = makeMeasuredPairs(out.sequences, options);
    if (!pairs)
        return makeError("the assay '" + excerpt(spec.assay, 80) + "': " + pairs.error());
    out.pairs = std::move(pairs.value());
    return out;
}

} // namespace d2dpo
