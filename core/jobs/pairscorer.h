// SPDX-License-Identifier: GPL-3.0-or-later
// "Informative pairs first": a fine-tuned model's implicit reward margin on pairs of sequences
// (diffusion/implicitreward.h), against the model it was fine-tuned from. The pairs it is least
// sure about (margin nearest 0) go first in pair generation and in the labeling queue. A
// pretrained model is its own reference: every margin is 0, and the order stays the draw's.
// Torch stays behind the pimpl: the CLI and the views include this header.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/result.h"
#include "jobs/pairgenerator.h"
#include "store/preferencestore.h"

namespace d2dpo {

class PairScorer {
public:
    /// The policy at `policyPath` against the reference at `referencePath` (the same path for a
    /// pretrained model), both of one task, on `device` ("auto", "cpu", "cuda"...).
    static Result<std::unique_ptr<PairScorer>> load(const std::string& policyPath, const std::string& referencePath,
                                                    const std::string& device = "auto");
    ~PairScorer();

    const ModelRecord& policy() const;
    const std::string& taskKey() const;

    /// One margin per pair, r(left) - r(right), from `draws` draws each; seeded. A pair of
    /// another task, or with a sequence the task cannot read, is an error naming it.
    Result<std::vector<double>> margins(const std::vector<ShownPair>& pairs, uint64_t seed, int draws = 16);

private:
    struct Impl;
    explicit PairScorer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

/// The reference a stored model was fine-tuned against: its parent's checkpoint, or itself when it
/// has no parent. An error when the parent is not in the store.
Result<std::string> referencePathOf(PreferenceStore& store, const ModelRecord& policy);
/// The same for the model at `checkpointPath`; itself when the store does not know it.
Result<std::string> referencePathOf(PreferenceStore& store, const std::string& checkpointPath);

/// The order of `margins` least sure first: smallest |margin|, equal ones in a seeded random order.
std::vector<size_t> leastSureFirst(const std::vector<double>& margins, uint64_t seed);

/// Pairs generated least sure first, as `d2dpo pairs --least-sure` and the Label view's "Least sure
/// first" make them: `candidatesPerPair` times `count` pairs drawn, each scored, the least sure kept.
struct LeastSurePairs {
    std::vector<ShownPair> pairs; ///< least sure first
    std::vector<double> margins;  ///< one per pair
    int64_t candidates = 0;       ///< candidate pairs scored
    double candidatesMeanAbs = 0; ///< their mean |margin|
    double keptMeanAbs = 0;       ///< the kept ones' mean |margin|
    std::string scoredBy;         ///< the scoring model's id
};
Result<LeastSurePairs> generateLeastSure(PairGenerator& generator, PairScorer& scorer, int64_t count,
                                         int64_t candidatesPerPair, uint64_t seed, const SamplingConfig& sampling = {},
                                         int draws = 16);

} // namespace d2dpo
