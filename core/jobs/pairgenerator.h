// SPDX-License-Identifier: GPL-3.0-or-later
// Pairs to show an expert: draw candidate sequences from a stored model, pair up distinct ones
// (two identical sequences are never shown), and put each pair's sequences on a random side.
// Torch stays behind a pimpl: the labeling window includes this header.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/config.h"
#include "store/preferencestore.h"
#include "base/result.h"
#include "base/trainlistener.h"

namespace d2dpo {

/// How pairs are drawn within a time per pair on this machine (PairGenerator::samplingWithin).
struct PairSampling {
    SamplingConfig sampling;
    double secondsPerPass = 0; ///< one denoiser pass over a pair (a batch of 2), measured
    double secondsPerPair = 0; ///< the passes of `sampling` times that
    std::string describe;      ///< for people: "exact sampler, 150 passes, about 0.4 s a pair"
};

struct PairBatch {
    std::vector<ShownPair> pairs;
    int64_t candidates = 0;  ///< sequences drawn
};

/// Pairs up to `maxPairs` distinct candidates in a seeded random order with random sides.
std::vector<ShownPair> formPairs(const std::vector<std::string>& candidates, const std::string& modelId,
                                 int64_t maxPairs, uint64_t seed);

class PairGenerator {
public:
    /// Loads the checkpoint on `device` ("auto", "cpu", "cuda"...).
    static Result<std::unique_ptr<PairGenerator>> load(const std::string& checkpointPath,
                                                       const std::string& device = "auto");
    ~PairGenerator();

    /// The model as the store records it (id, lineage, configs, metrics, path).
    const ModelRecord& model() const;
    int64_t length() const;

    /// The sampler that draws a pair within `secondsPerPair` here (passesWithin(): the exact sampler
    /// when its D passes fit, else the confident sampler with as many passes as fit, at least
    /// kFewestConfidentPasses, at most D; its quality cost: docs/paper-experiment.md). Times a pass
    /// first (a few forward passes of a batch of 2). Noise processes without an exact sampler keep
    /// `fallback`.
    Result<PairSampling> samplingWithin(double secondsPerPair, const SamplingConfig& fallback = {});

    /// `count` sequences as the model draws them (repeats kept), as token text. `progress(done,
    /// count)` hears each pass of the model (at most every 0.2 s) and `stop` is heard before each:
    /// a stopped draw is the error kSamplingStopped.
    Result<std::vector<std::string>> sample(int64_t count, uint64_t seed, const SamplingConfig& sampling = {},
                                            const StopToken* stop = nullptr,
                                            const std::function<void(double, int64_t)>& progress = {});
    static constexpr const char* kSamplingStopped = "stopped while drawing samples";
    /// Up to `pairCount` pairs (fewer only when the model keeps drawing the same sequence).
    /// `progress(drawn, toDraw)` hears each quarter of the draws (at protein length each takes
    /// seconds); the sequences are drawn in those chunks, seeded as a whole. `stop` is heard before
    /// each pass of the model: a stopped draw is the error kSamplingStopped.
    Result<PairBatch> generate(int64_t pairCount, uint64_t seed, const SamplingConfig& sampling = {},
                               const std::function<void(int64_t, int64_t)>& progress = {},
                               const StopToken* stop = nullptr);

private:
    struct Impl;
    explicit PairGenerator(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace d2dpo
