// SPDX-License-Identifier: GPL-3.0-or-later
// How many samples a measurement someone waits on draws: a fixed count, or as many as fit in a
// stated time at the model's measured cost (one timed pass of the model, train/samplecost.h).
// A model of 10-bit integers draws thousands in a second and an 8M-parameter protein model a few
// a second, so a fixed count is either wasted precision or minutes of waiting. One rule for the
// import and new-model dialogs, the Models view's Auto and a D2-DPO run's evaluations (desktop
// and CLI). Torch-free.
#pragma once

#include <cstdint>
#include <string>

namespace d2dpo {

/// The time an Auto measurement aims at: long enough for a VSR to a few percent on small models,
/// short enough that nobody waits long for a new model's figures.
inline constexpr double kMeasurementSeconds = 30;
/// The fewest samples a fitted count draws, whatever it costs: fewer say nothing (a VSR from 20
/// samples is within about +-0.1); the time they take is then said, not hidden.
inline constexpr int64_t kFewestFittedSamples = 20;

struct SampleBudget {
    int64_t most = 0;   ///< the count, or with `seconds` > 0 the most that are drawn
    double seconds = 0; ///< > 0: as many as fit in about this many seconds (at most `most`)

    bool fitted() const { return seconds > 0; }
};

/// The count that fits `seconds` at `secondsPerSample`, rounded down to 1, 2 or 5 times a power of
/// ten (models of one shape then draw the same count, so their figures compare on the same draws),
/// at least kFewestFittedSamples and at most `most` (which wins when smaller).
int64_t samplesWithin(double secondsPerSample, double seconds, int64_t most);

/// "200 samples (about 0:30, 0.15 s a sample)": what a fitted measurement tells the user.
std::string describeFittedCount(int64_t samples, double secondsPerSample);

/// The most sequences a pass over which takes about `passSeconds` when one costs
/// `secondsPerRowPass` in a pass: a power of two (so timing noise rarely changes it, and with it
/// the draws), at least 1. A stop is heard between passes: this bounds how long it waits.
int64_t rowsPerPassWithin(double secondsPerRowPass, double passSeconds);

/// The fewest passes the confident sampler gets where it stands in for the exact one.
inline constexpr int kFewestConfidentPasses = 8;

/// Passes one draw of a sequence of `length` gets within `secondsPerDraw` at `secondsPerPass`, where
/// the exact sampler exists (a masking process): `length`, the exact sampler's pass per position,
/// when they fit; else as many as fit, for the confident sampler, at least kFewestConfidentPasses
/// (at most `length`). The fast sampler for large models and the exact one for small ones, one
/// rule for the Label view's pairs and an export's samples.
int64_t passesWithin(double secondsPerPass, double secondsPerDraw, int64_t length);

/// Sampler batches for an evaluation someone waits on: an eighth of `samples` (50 to 1000), so a
/// long one reports and hears a stop between batches too. One rule for every such draw: the
/// pretraining's and the import's evaluations and the Models view's measurements.
int64_t evaluationBatchFor(int64_t samples);

} // namespace d2dpo
