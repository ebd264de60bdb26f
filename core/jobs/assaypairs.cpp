// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/assaypairs.h"

#include <algorithm>

#include "assays/heldoutsplit.h"
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

Result<std::pair<std::vector<MeasuredSequence>, std::vector<MeasuredSequence>>>
splitAssay(AssayBook& store, const AssayPairsSpec& spec, AssayRecord* assay)
{
    if (!(spec.heldOut >= 0 && spec.heldOut < 1))
        return makeError("the held-out share must be at least 0 and below 1");
    auto kind = splitKindNamed(spec.split);
    if (!kind)
        return makeError(kind.error());
    auto assays = store.assays();
    if (!assays)
        return makeError(assays.error());
    const auto found = std::find_if(assays->begin(), assays->end(),
                                    [&](const AssayRecord& a) { return a.name == spec.assay; });
    if (found == assays->end())
        return makeError(ErrorCode::NotFound, "the store holds no assay named '" + excerpt(spec.assay, 80) +
                                                  "' (`d2dpo measurements list` shows them)");
    if (assay)
        *assay = *found;
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
    std::vector<MeasuredSequence> summaries = summariseMeasurements(measurements);
    std::vector<std::string> sequences;
    sequences.reserve(summaries.size());
    for (const MeasuredSequence& s : summaries)
        sequences.push_back(s.sequence);
    auto heldOut = heldOutFlags(sequences, kind.value(), spec.heldOut, spec.splitSeed);
    if (!heldOut)
        return makeError("the assay '" + excerpt(spec.assay, 80) + "': " + heldOut.error());
    std::pair<std::vector<MeasuredSequence>, std::vector<MeasuredSequence>> out;
    for (size_t i = 0; i < summaries.size(); ++i)
        (heldOut.value()[i] ? out.second : out.first).push_back(std::move(summaries[i]));
    return out;
}

Result<AssayPairsResult> assayPairs(AssayBook& store, const AssayPairsSpec& spec)
{
    auto strategy = pairStrategyNamed(spec.strategy);
    if (!strategy)
        return makeError(strategy.error());
    if (spec.budget < 1)
        return makeError("the pair budget must be at least 1");
    AssayPairsResult out;
    auto split = splitAssay(store, spec, &out.assay);
    if (!split)
        return makeError(split.error());
    out.sequences = std::move(split->first);
    out.heldOut = split->second.size();
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
    if (out.heldOut > 0)
        out.pairs.description += "; " + std::to_string(out.heldOut) + " sequences held out (" + spec.split + " split)";
    return out;
}

} // namespace d2dpo
