// SPDX-License-Identifier: GPL-3.0-or-later
#include "jobs/assayeval.h"

#include <cmath>

#include "assays/heldoutsplit.h"
#include "jobs/pairscorer.h"
#include "store/preferencestore.h"

namespace d2dpo {

Result<AssayEvalResult> evaluateOnHeldOut(const AssayEvalSpec& spec)
{
    auto store = PreferenceStore::open(spec.storePath, PreferenceStore::OpenMode::MustExist);
    if (!store)
        return makeError(store.error());
    AssayRecord assay;
    auto split = splitAssay(*store.value(), spec.split, &assay);
    if (!split)
        return makeError(split.error());
    std::vector<MeasuredSequence> heldOut = std::move(split->second);
    if (spec.split.heldOut <= 0)
        return makeError("name the held-out share the run was trained with (--held-out, e.g. 0.2): the model "
                         "is judged on sequences it never saw");
    if (heldOut.size() < 2)
        return makeError("the split holds out " + std::to_string(heldOut.size()) + " of the assay's sequences; at "
                         "least 2 are needed (a larger --held-out, or more measurements)");
    if (int64_t(heldOut.size()) > spec.maxSequences)
        heldOut.resize(size_t(spec.maxSequences));
    const std::string checkpoint = spec.checkpoint;
    auto scorer = PairScorer::load(
        checkpoint, [&](const ModelRecord& policy) { return referencePathOf(*store.value(), policy); }, spec.device);
    if (!scorer)
        return makeError(scorer.error());
    if (scorer.value()->taskKey() != assay.task)
        return makeError("the assay '" + assay.name + "' measured sequences of the task " + assay.task +
                         "; the model's task is " + scorer.value()->taskKey());
    AssayEvalResult out;
    out.heldOut = int64_t(heldOut.size());
    out.selfReferenced = scorer.value()->selfReferenced();
    out.score = "the D2-DPO implicit reward against the model's reference (" + std::to_string(spec.draws) +
                " noise draws per sequence)";
    // Each sequence's reward up to one constant: its margin over the first held-out sequence.
    std::vector<ShownPair> pairs;
    for (const MeasuredSequence& s : heldOut)
        pairs.push_back(ShownPair{0, s.sequence, heldOut.front().sequence, "", "", assay.task, false});
    auto margins = scorer.value()->margins(pairs, spec.seed, spec.draws);
    if (!margins)
        return makeError(margins.error());
    std::vector<double> scores = margins.value(), values;
    scores[0] = 0;
    for (const MeasuredSequence& s : heldOut)
        values.push_back(assay.direction == "lower" ? -s.mean : s.mean);
    out.spearman = spearman(scores, values);
    double right = 0;
    for (size_t i = 0; i < heldOut.size(); ++i)
        for (size_t j = i + 1; j < heldOut.size(); ++j) {
            if (values[i] == values[j])
                continue;
            ++out.pairs;
            const double agree = (scores[i] - scores[j]) * (values[i] - values[j]);
            right += agree > 0 ? 1.0 : agree == 0 ? 0.5 : 0.0;
        }
    out.pairAccuracy = out.pairs > 0 ? right / double(out.pairs) : std::nan("");
    return out;
}

} // namespace d2dpo
