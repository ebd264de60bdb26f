// SPDX-License-Identifier: GPL-3.0-or-later
// How a model is measured: the sampler, how many samples and the seed of their draws. A model's
// figures depend on all three, so every place that measures one (a D2-DPO run's evaluations and
// its reference's baseline, the Models view, the model files' summaries) takes them from here and
// the views agree on the same model.
#pragma once

#include <cstdint>

#include "base/config.h"

namespace d2dpo {

/// The sample count a model is measured on by default (DpoScheduleConfig::evalSamples' default too).
inline constexpr int64_t kMeasurementSamples = 2000;

struct MeasurementSpec {
    SamplingConfig sampling;  ///< the default sampler ("exact"), in batches of 1000
    int64_t samples = kMeasurementSamples;
    uint64_t seed = 1;        ///< the default run's (seed 0) evaluation seed

    /// How a D2-DPO run with seed `runSeed` measures its reference and its policy: its own
    /// sampler and sample count, drawn with seed runSeed + 1 (apart from the run's training draws).
    static MeasurementSpec ofRun(const SamplingConfig& sampling, int64_t samples, uint64_t runSeed)
    {
        return {sampling, samples, runSeed + 1};
    }
};

/// The measurement the Models view shows for every model, equal to a default run's: so a
/// reference's figures there are the ones its runs log and plot as their baseline.
inline MeasurementSpec standardMeasurement() { return MeasurementSpec{}; }

} // namespace d2dpo
